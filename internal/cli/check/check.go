// Package check implements `metalab check`: compile a kernel and its
// variants, hold them to the threadgroup memory limit, and require bitwise
// output parity with the baseline on every case of a kernel spec.
package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"metalab/backend"
	checkpkg "metalab/check"
	"metalab/internal/cli/cmdutil"
	"metalab/spec"
)

// CheckOptions are the inputs of `metalab check`.
type CheckOptions struct {
	IO       *cmdutil.IOStreams
	ReadFile func(string) ([]byte, error)
	// NewBackend returns the backend called name; nil means the built-in
	// backends (cpu).
	NewBackend func(name string) (backend.Backend, error)
	// CompileTimeout bounds one compile (--compile-timeout).
	CompileTimeout time.Duration

	Spec     string
	Variants []string
	Source   string // the spec source (or a byte-identical snapshot of it) the variants replace; "" means the spec's main source
	Backend  string
	Cases    []string
	TGLimit  int  // bytes
	NoDetect bool // the older name of NoVerify
	NoVerify bool
	// VerifyBackend names the verification backend; "" means the backend
	// itself when it has a checking mode, else cpu.
	VerifyBackend  string
	VerifyCases    []string
	StrictBaseline bool
	Strict         bool
	DumpDir        string
	Race           bool
	JSON           bool
	Timeout        time.Duration // per run; 0 means check's defaults (see check.Options)
	// HeldOut is --held-out: held-out cases per variant; -1 (the
	// default) means DefaultHeldOut when the spec declares domains.
	HeldOut    int
	Seed       uint64 // --seed, when SeedSet
	SeedSet    bool
	FreshSeeds bool
	Replay     []string // --replay: tokens, or files of them (or a check --json report)
	// Jobs is --jobs: variants checked at once.
	Jobs int
	// Parity is --parity: the rule variants are compared with the
	// baseline by (bitwise unless a tolerance is asked for).
	Parity checkpkg.Parity
}

// DefaultHeldOut is the number of held-out cases per variant when the
// spec declares domains and --held-out is not given.
const DefaultHeldOut = 4

// NewCmdCheck returns the check command; runF, if non-nil, replaces the
// run function (tests capture the parsed options with it).
func NewCmdCheck(f *cmdutil.Factory, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: f.IOStreams, ReadFile: f.ReadFile}
	var tgLimit, parity string
	cmd := &cobra.Command{
		Use:   "check <spec.yaml> [flags]",
		Short: "Check kernel variants for parity with their baseline",
		Long: `Compile the baseline kernel of a spec and each --variant, refuse variants over
the threadgroup memory limit, and run baseline and variants on identical
inputs for every case of the chosen sets, comparing every byte of every
buffer. Without --cases, the spec's defaults: sets run (else its quick
set, else every set); the report names the sets that did not run. The
baseline is first run against itself as a control; if it is not
deterministic no variant is judged.

Each variant gets a verdict in two parts. It is verified on the
verification backend (--verify-backend: the backend itself when it has a
checking mode, as cpu does, else cpu) in the checking mode, on the
verification cases (--verify-cases; default: the --cases on one backend,
else the spec's defaults): each access to device and threadgroup memory is
checked, so a variant fails when it reads or writes out of bounds (any
distance), reads threadgroup memory no thread of its threadgroup wrote
(fail-uninit), or lets two simd groups (or two threadgroups, on device
memory) touch the same byte between barriers with one of them writing
(fail-race) — whatever the thread order, and even when the output bytes
happen to match. Then it is confirmed on the backend, in the plain build
(the one a sweep times): bitwise parity on every case. On one backend, a
variant whose checking and plain builds give different bytes fails
(fail-builds-disagree). --no-verify confirms only, and every result says
"not verified".

The baseline's own findings (a race guarded only by a mem_none barrier,
threads storing the same value, unwritten slots whose bytes reach no
output, ...) are reported once as baseline findings and do not stop the
check; a variant fails for a finding the baseline does not have at the same
source site (lines mapped by a line diff), or for any finding in code it
changed. --strict-baseline refuses a baseline with findings. A conflict
within one simd group with no simd-group synchronisation is a warning
("relies on SIMD lockstep"), a failure with --strict. With --race, every
case also runs under several thread and simd-group orders and any
difference in the bytes fails (on a case relying on lockstep, the orders
that reorder a simd group's lanes are left out, with a warning).

When the spec declares domains (the values its variables may take), each
variant is also judged on --held-out cases (default 4; 0 turns them off
and the report says so) drawn from them with a seed made of the baseline,
the variant, the spec and a nonce of this run (--seed draws the same
again), so a variant cannot be fitted to the listed cases. A failing
held-out case is shrunk to the smallest failing case within the domains
and the report prints the command that replays it (--replay TOKEN, or a
file of tokens, or a check --json report). --fresh-seeds gives the listed
cases input seeds drawn for the run. Each variant also runs its first case
twice and fails fail-nondeterministic when the bytes differ.

--parity ulp=N or --parity rel=X opts into a tolerance for variants that
reorder floating-point arithmetic: a float, half or bfloat output
component may then differ from the baseline's by at most N units in the
last place, or by a relative error of at most X (|got-want| divided by
the larger magnitude); NaN matches only NaN, an infinity only itself, +0
and -0 match; integer outputs, padding, slack and input buffers stay
bitwise. Every row then says whether the variant was bitwise after all,
and if not by how much (max ulp, max relative error, where). Determinism,
the builds and the thread orders are always compared bitwise.

check reads the spec, its sources and the variants and writes nothing but
its report (and the backend's compile cache). --source names the file the
variants replace when the spec runs several; a snapshot of it with the
same bytes is accepted, a stale one is refused.

Progress goes to standard error once a check takes more than a few
seconds; Ctrl-C stops it and reports what finished.

The exit status is 0 only when the control and every variant pass; 1 for a
failed check, a bad spec (file:line:col) or a missing file; 2 for usage
errors; 3 when this machine cannot check (no compiler, a full disk, an
unwritable cache, a verification backend that cannot run here).`,
		Example: "  metalab check kernels/qsa_prompt.yaml --variant /tmp/v1.metal --cases quick\n" +
			"  metalab check kernels/qsa_prep.yaml --race --json\n" +
			"  metalab check kernels/examples/heldout/wrapsum.yaml --variant kernels/examples/heldout/variants/mult32.metal --held-out 8",
		Args: cmdutil.ExactArgs(1, "<spec.yaml>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = args[0]
			n, err := ParseSize(tgLimit)
			if err != nil {
				return cmdutil.FlagErrorf("--tg-limit: %v", err)
			}
			opts.TGLimit = n
			if opts.Parity, err = checkpkg.ParseParity(parity); err != nil {
				return cmdutil.FlagErrorf("--parity: %v", err)
			}
			opts.SeedSet = cmd.Flags().Changed("seed")
			if opts.Jobs < 1 {
				return cmdutil.FlagErrorf("--jobs %d: want at least 1", opts.Jobs)
			}
			if opts.HeldOut < -1 {
				return cmdutil.FlagErrorf("--held-out %d: want a count, 0 to turn held-out cases off", opts.HeldOut)
			}
			if runF != nil {
				return runF(opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Variants, "variant", nil, "variant source `FILE` (repeatable)")
	cmd.Flags().StringVar(&opts.Source, "source", "", "the spec's source `FILE` the variants replace (default: the spec's source:)")
	cmdutil.AddCompileTimeoutFlag(cmd.Flags(), &opts.CompileTimeout)
	cmd.Flags().StringVar(&opts.Backend, "backend", "cpu", "backend `NAME` to compile and run on: cpu, cuda, metal, or auto (the first of metal, cuda, cpu that runs here)")
	cmd.Flags().StringSliceVar(&opts.Cases, "cases", nil, "case set `NAME` (repeatable or comma-separated; default: the spec's defaults, else quick, else all)")
	cmd.Flags().StringVar(&parity, "parity", "bitwise", "the parity `RULE` variants are compared by: bitwise, or a tolerance for reordered float arithmetic, ulp=N or rel=X")
	cmd.Flags().StringVar(&tgLimit, "tg-limit", "16KiB", "threadgroup memory `LIMIT` of a stage, static and bound by the spec's threadgroup buffers (16384, 16KiB, 8K)")
	cmd.Flags().BoolVar(&opts.NoVerify, "no-verify", false, "confirm only, do not verify (faster; races, uninitialised reads and bad accesses that leave the bytes alone go unseen; results say \"not verified\")")
	cmd.Flags().BoolVar(&opts.NoDetect, "no-detect", false, "the older name of --no-verify")
	cmd.Flags().StringVar(&opts.VerifyBackend, "verify-backend", "", "verification backend `NAME` (default: the backend itself when it has a checking mode, else cpu)")
	cmd.Flags().StringSliceVar(&opts.VerifyCases, "verify-cases", nil, "verification case set `NAME` (repeatable or comma-separated; default: --cases on one backend, else the spec's defaults)")
	cmd.Flags().BoolVar(&opts.StrictBaseline, "strict-baseline", false, "refuse a baseline with findings of its own instead of judging variants against them")
	cmd.Flags().StringVar(&opts.DumpDir, "dump", "", "for each variant that fails parity, write its first differing case (inputs, baseline and variant outputs as .npy) under `DIR`/<variant>/")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "fail on warnings too (lanes of one simd group relying on lockstep)")
	cmd.Flags().BoolVar(&opts.Race, "race", false, "also run under several thread and simd-group orders and fail on any difference")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	cmd.Flags().IntVar(&opts.Jobs, "jobs", runtime.NumCPU(), "check `N` variants at once (each compiles, verifies and confirms on its own); 1: one at a time; the report is the same")
	cmd.Flags().IntVar(&opts.HeldOut, "held-out", -1, "held-out `N` cases per variant drawn from the spec's domains (default 4 when the spec declares domains; 0 turns them off)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 0, "the run's `SEED` for held-out cases and fresh seeds (default: a nonce per run)")
	cmd.Flags().BoolVar(&opts.FreshSeeds, "fresh-seeds", false, "give the listed cases input seeds drawn for this run instead of the spec's")
	cmd.Flags().StringArrayVar(&opts.Replay, "replay", nil, "judge only the case a replay `TOKEN` names (or every token in a FILE, or the failing cases of a check --json report); repeatable")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "per-run `DURATION` limit (default: 30m for the baseline, 10x the baseline's time for a variant, at least 1m)")
	return cmd
}

// ParseSize parses a byte count: 16384, 16K, 16KiB, 1M, 1MiB (K and M are
// binary multiples).
func ParseSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	lower := strings.ToLower(t)
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"k", 1 << 10}, {"m", 1 << 20}, {"b", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 || n > math.MaxInt32/mult {
		return 0, fmt.Errorf("bad size %q (want bytes up to 2GiB, e.g. 16384, 16KiB or 8K)", s)
	}
	return n * mult, nil
}

// resolveSource returns the stage source that --source names: a source
// of the spec's stages, or a copy of one with the same bytes (a baseline
// snapshot). A file that matches no stage source, a stale snapshot above
// all, is an error that shows both hashes, so the variants are never
// judged against a baseline they were not made from. It returns "" when
// --source is not set.
func resolveSource(opts *CheckOptions, s *spec.Spec) (string, error) {
	if opts.Source == "" {
		return "", nil
	}
	var paths []string
	for _, st := range s.Stages {
		if !slices.Contains(paths, st.Source) {
			paths = append(paths, st.Source)
		}
	}
	for _, p := range paths {
		if cmdutil.SameFile(p, opts.Source) {
			return p, nil
		}
	}
	text, err := opts.ReadFile(opts.Source)
	if err != nil {
		return "", fmt.Errorf("--source: %w", err)
	}
	var have []string
	for _, p := range paths {
		base, err := opts.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("read baseline: %w", err)
		}
		if bytes.Equal(base, text) {
			return p, nil
		}
		have = append(have, fmt.Sprintf("%s (sha256 %s)", p, shortSHA(base)))
	}
	return "", cmdutil.FlagErrorf("--source %s (sha256 %s) is not a source of %s, nor a copy of one; its stages run %s. "+
		"A snapshot of the baseline that has since changed is stale: make variants from the current source, or point the spec at the snapshot",
		opts.Source, shortSHA(text), opts.Spec, strings.Join(have, ", "))
}

func shortSHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:6])
}

func checkRun(ctx context.Context, opts *CheckOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	data, err := opts.ReadFile(opts.Spec)
	if err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	s, err := spec.Parse(opts.Spec, data)
	if err != nil {
		return err
	}
	for _, name := range append(slices.Clone(opts.Cases), opts.VerifyCases...) {
		if s.Set(name) == nil {
			var have []string
			for _, set := range s.Sets {
				have = append(have, set.Name)
			}
			flag := "--cases"
			if !slices.Contains(opts.Cases, name) {
				flag = "--verify-cases"
			}
			return cmdutil.FlagErrorf("%s %q: %s has no such case set (sets: %s)", flag, name, opts.Spec, strings.Join(have, ", "))
		}
	}
	base, err := resolveSource(opts, s)
	if err != nil {
		return err
	}
	var variants []checkpkg.Variant
	for _, path := range opts.Variants {
		text, err := opts.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read variant: %w", err)
		}
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		variants = append(variants, checkpkg.Variant{Name: name, Path: path, Text: text, Base: base})
	}
	// Variants from different directories may share a file name; the
	// report then names them by path, so no result hides another.
	count := map[string]int{}
	for _, v := range variants {
		count[v.Name]++
	}
	for i := range variants {
		if count[variants[i].Name] > 1 {
			variants[i].Name = variants[i].Path
		}
	}
	mk := opts.NewBackend
	if mk == nil {
		mk = func(name string) (backend.Backend, error) { return cmdutil.ChooseBackend(ctx, name) }
	}
	mk = withCompileTimeout(mk, opts.CompileTimeout)
	be, err := mk(opts.Backend)
	if err != nil {
		return err
	}
	if ok, why := be.Available(ctx); !ok {
		return &backend.EnvError{Op: "backend " + be.Name() + " is not available", Err: errors.New(why)}
	}
	ver, err := verifyBackend(ctx, opts, be, mk)
	if err != nil {
		return err
	}
	replay, err := replayCases(opts)
	if err != nil {
		return err
	}
	heldOut := opts.HeldOut
	if heldOut < 0 {
		heldOut = 0
		if s.HasDomains() {
			heldOut = DefaultHeldOut
		}
	}
	rep, err := checkpkg.Run(ctx, checkpkg.Options{
		HeldOut: heldOut, Seed: opts.Seed, SeedSet: opts.SeedSet, FreshSeeds: opts.FreshSeeds, Replay: replay,
		Spec: s, Variants: variants, Backend: be, Sets: opts.Cases, TGLimit: opts.TGLimit,
		Verify: ver, VerifySets: opts.VerifyCases, NoVerify: opts.NoVerify || opts.NoDetect, StrictBaseline: opts.StrictBaseline,
		Strict: opts.Strict, Race: opts.Race, Timeout: opts.Timeout, ReadFile: opts.ReadFile,
		Progress: cmdutil.Progress(opts.IO.ErrOut, 3*time.Second), DumpDir: opts.DumpDir, Parity: opts.Parity,
		Jobs: opts.Jobs,
	})
	if err != nil && rep == nil {
		return err
	}
	if err != nil {
		// Interrupted: report what finished, then the interruption.
		if werr := writeReport(opts, rep); werr != nil {
			return werr
		}
		return fmt.Errorf("check interrupted after %d of %d variants: %w", len(rep.Variants), len(variants), err)
	}
	if err := writeReport(opts, rep); err != nil {
		return err
	}
	if c := rep.Control; c != nil && c.Status == checkpkg.Timeout {
		fmt.Fprintf(opts.IO.ErrOut, "hint: the baseline itself timed out; large cases need a longer --timeout (e.g. --timeout 60m)\n")
	}
	if !rep.OK() {
		return cmdutil.ErrSilent
	}
	return nil
}

// verifyBackend returns the verification backend: none with --no-verify;
// the backend itself when --verify-backend names it, or names nothing and
// it has a checking mode; else the named one (cpu by default), which must
// run here and have a checking mode: otherwise the check stops before any
// work (exit 3), never to compare bytes only in silence.
func verifyBackend(ctx context.Context, opts *CheckOptions, be backend.Backend, mk func(string) (backend.Backend, error)) (backend.Backend, error) {
	if opts.NoVerify || opts.NoDetect {
		if opts.VerifyBackend != "" {
			return nil, cmdutil.FlagErrorf("--verify-backend %s and --no-verify: choose one", opts.VerifyBackend)
		}
		return nil, nil
	}
	name := opts.VerifyBackend
	if name == "" {
		if be.Info(ctx).Check {
			return be, nil
		}
		name = "cpu"
	}
	if name == be.Name() {
		if !be.Info(ctx).Check {
			return nil, cmdutil.FlagErrorf("--verify-backend %s: the %s backend has no checking mode (verify on cpu)", name, name)
		}
		return be, nil
	}
	ver, err := mk(name)
	if err != nil {
		return nil, fmt.Errorf("--verify-backend: %w", err)
	}
	if ok, why := ver.Available(ctx); !ok {
		return nil, &backend.EnvError{Op: "verification backend " + ver.Name() + " is not available (variants on " + be.Name() +
			" are verified there; --no-verify confirms them by their bytes only)", Err: errors.New(why)}
	}
	if !ver.Info(ctx).Check {
		return nil, cmdutil.FlagErrorf("--verify-backend %s: the %s backend has no checking mode (verify on cpu)", name, ver.Name())
	}
	return ver, nil
}

func writeReport(opts *CheckOptions, rep *checkpkg.Report) error {
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, rep)
	}
	return rep.WriteText(opts.IO.Out)
}

// withCompileTimeout wraps mk so that every backend it makes, the
// verification backend's included, compiles under the limit d.
func withCompileTimeout(mk func(string) (backend.Backend, error), d time.Duration) func(string) (backend.Backend, error) {
	return func(name string) (backend.Backend, error) {
		b, err := mk(name)
		if err == nil {
			cmdutil.ApplyCompileTimeout(b, d)
		}
		return b, err
	}
}

// replayCases reads --replay: each value is a token, or a file holding
// tokens (one a line, # comments) or a check --json report, whose
// variants' smallest failing drawn cases are replayed.
func replayCases(opts *CheckOptions) ([]spec.Case, error) {
	var out []spec.Case
	for _, r := range opts.Replay {
		toks := []string{r}
		if !strings.Contains(r, "@") {
			data, err := opts.ReadFile(r)
			if err != nil {
				return nil, cmdutil.FlagErrorf("--replay %s: not a token (set/name@seed/VAR=value,...) and %v", r, err)
			}
			toks = replayTokens(data)
			if len(toks) == 0 {
				return nil, cmdutil.FlagErrorf("--replay %s: no replay token in the file", r)
			}
		}
		for _, t := range toks {
			c, err := spec.ParseToken(t)
			if err != nil {
				return nil, cmdutil.FlagErrorf("--replay: %v", err)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func replayTokens(data []byte) []string {
	var rep checkpkg.Report
	if json.Unmarshal(data, &rep) == nil && rep.Spec != "" {
		var out []string
		for _, v := range rep.Variants {
			if v.HeldOut != nil && v.HeldOut.Shrunk != nil {
				out = append(out, v.HeldOut.Shrunk.Token)
			}
		}
		return out
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}
