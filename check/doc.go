// Package check decides whether kernel variants may replace their
// baseline: each variant must compile, stay within the threadgroup memory
// limit, and produce bitwise the same bytes as the baseline in every output
// buffer, never-written regions included (outputs start as sentinel
// bytes), and leave every input buffer as the baseline leaves it, for
// every case of the chosen sets (by default the spec's DefaultSets). The
// padding bytes of an element type hold no value and are not compared.
// Options.Parity opts into a tolerance for reordered float arithmetic
// (ulp=N, rel=X; see ParityMode), and every result so judged says whether
// it was bitwise and by how much it was not (Result.Tolerance). A variant
// may run under a spec of its own, another point of the baseline's tunable
// parameters (Variant.Spec; see point.go).
//
// # The two-part verdict
//
// A variant is verified on the verification backend (Options.Verify, or
// the backend itself when it has a checking mode) in the checking mode, on
// the verification cases (Options.VerifySets), and confirmed on the run's
// backend in the plain build, the one Programs gives for timing, on every
// case (Options.Sets). It passes when both parts pass (Result.Verification,
// Result.Confirmation); it stops at the first that fails (Result.Stopped).
// On one backend both builds run every case, and a variant whose builds
// give different bytes fails (FailBuildsDisagree). With Options.NoVerify
// variants are confirmed only, and every result says they are not verified.
//
// Both parts run only the stages a variant changes, where the backend
// names its programs' objects (backend.ObjectProgram; both backends prune
// a translation per entry, so a stage the edits do not reach is the
// baseline's object): a variant starts from the baseline's state before
// its first changed stage, and the stages after its last run only where
// the state there is not the baseline's, byte for byte (see window.go).
// Drawn cases and the cases of a variant's own spec run every stage.
//
// # Baseline findings
//
// The baseline's own findings do not stop the check (unless
// Options.StrictBaseline): the control reports them once
// (Result.BaselineFindings), and a variant fails only for a finding whose
// site (kind, kernel, memory and both accesses' source lines, mapped to the
// baseline's through Variant.Edits or a line diff) the baseline does not
// have, or for one in code it changed.
//
// # The checking mode
//
// Unless Options.NoDetect, every case runs in the backend's checking mode
// (backend.Source.Check): every access to device and threadgroup memory is
// checked, so a variant that reads or writes out of bounds, reads
// threadgroup memory no thread wrote, or lets two simd groups (or two
// threadgroups, on device memory) touch a byte between barriers with one
// writing, fails — in any thread order, even when its bytes match. Findings
// are described with the spec's names (Finding): the kernel, the buffer with
// element coordinates or the threadgroup array with its indices, both
// threads and both source lines. Lanes of one simd group relying on
// lockstep and divergent barriers are warnings (failures with
// Options.Strict). See docs/checking.md.
//
// With Options.Race, every case also runs under several thread and
// simd-group orders, plainly, and any difference in the bytes fails: a
// second, schedule-based probe.
//
// # Control
//
// Before any variant is judged, the baseline's spec is checked against its
// kernels (spec.Instance.CheckKernels) and the baseline runs plainly and in
// the checking mode on the same inputs (and, with the race probe, under
// every order), and plainly twice on a run backend of its own. If those
// runs differ, no variant is judged: the report says so.
//
// # Held-out cases
//
// With Options.HeldOut, each variant is also judged on cases drawn from
// the spec's domains (spec.Spec.Draw) with a seed made from the baseline,
// the variant, the spec and a per-run nonce (Options.Seed to draw the same
// again), in the verification (or, unverified, the confirmation); a
// failing one is shrunk within the domains and Result.Replay is the
// command that replays the smallest failing case (Options.Replay judges
// exactly the cases of replay tokens). Options.FreshSeeds gives listed
// cases input seeds of the run. A drawn case the baseline or the spec
// cannot run is skipped and counted (Result.HeldOut). Each variant also
// runs its first confirmation case twice: bytes that differ fail
// FailNondet, with both runs in the mismatch. See heldout.go and
// docs/checking.md.
//
// # Results
//
// Everything a variant does wrong (a compile error, a refused source, a
// crash, a timeout, an out-of-bounds access, a race, an uninitialised read,
// a parity difference, too much threadgroup memory, entry points that no
// longer fit the spec) is that variant's result, with its log; the other
// variants still run. Run returns an error only when checking itself cannot
// proceed (a bad spec case, an unreadable source, a cancelled context, a
// machine that cannot run the backend: *backend.EnvError).
package check
