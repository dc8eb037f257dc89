package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"metalab/backend"
	"metalab/internal/edit"
	"metalab/internal/inputfile"
	"metalab/msl"
	"metalab/spec"
)

// DefaultTGLimit is the threadgroup memory limit of a stage in bytes:
// its static threadgroup memory and the spec's threadgroup buffers bound
// to it (TGMem.DynamicAfter) together.
const DefaultTGLimit = 16384

// DefaultOrders are the thread orders of the race probe (Options.Race):
// thread orders and simd-group orders that let one simd group run ahead.
var DefaultOrders = []backend.Order{
	{Kind: "in-order"}, {Kind: "reversed"}, {Kind: "simd-ahead"}, {Kind: "simd-reversed"},
	{Kind: "shuffle", Seed: 1}, {Kind: "simd-shuffle", Seed: 2},
}

// Options configure Run.
type Options struct {
	Spec     *spec.Spec
	Variants []Variant
	// Backend is the run's backend: every variant is confirmed on it (the
	// plain build, bitwise parity on every case of Sets), and Programs
	// builds on it for timing.
	Backend backend.Backend
	Sets    []string // the confirmation's case sets; nil means the spec's DefaultSets
	TGLimit int      // bytes; 0 means DefaultTGLimit
	// Verify is the verification backend: every variant runs there in the
	// checking mode on VerifySets. nil means Backend when it has a
	// checking mode; when it has none, variants are not verified (a note
	// says so; the command line passes the cpu backend instead).
	Verify backend.Backend
	// VerifySets are the verification's case sets; nil means Sets when
	// Backend verifies itself (both builds then run every case), else the
	// spec's DefaultSets.
	VerifySets []string
	// NoVerify turns verification off: variants are confirmed only, and
	// every result says "not verified"; races, uninitialised reads and
	// out-of-bounds accesses that leave the bytes alone go unseen.
	NoVerify bool
	// NoDetect is NoVerify's older name; either turns verification off.
	NoDetect bool
	// StrictBaseline refuses a baseline with findings of its own (the
	// control fails), as before findings were judged differentially.
	StrictBaseline bool
	// Strict makes warnings (a simd group relying on lockstep) failures.
	Strict bool
	// Race also runs every case under Orders (without the checking mode)
	// and requires the same bytes from each: a second, schedule-based probe.
	Race   bool
	Orders []backend.Order // nil means DefaultOrders
	// Timeout bounds one run of a case. 0 means: ControlTimeout for the
	// baseline, and for a variant VariantTimeoutFactor times the slowest
	// baseline run of that case, at least MinVariantTimeout, so a hanging
	// variant is caught soon on small cases and a slow case is not cut short.
	Timeout time.Duration
	// ReadFile reads the baseline sources; nil means inputfile.ReadFile (regular files within the input limit).
	ReadFile func(string) ([]byte, error)
	// Progress, if set, is told what runs: one line per case of each
	// variant, each naming it. With Jobs > 1 it is called from several
	// goroutines at once.
	Progress func(msg string)
	// Jobs is how many variants Run checks at once (Session.Check on that
	// many goroutines); 0 or 1 checks one at a time. The report is the
	// same: results in the order of Variants.
	Jobs int
	// DumpDir, if set, receives for each variant that fails parity the
	// first differing case: its inputs and the baseline's and the
	// variant's outputs as .npy files, in DumpDir/<variant>/ (see Dump).
	DumpDir string
	// HeldOut is how many held-out cases each variant is judged on
	// besides the listed ones, drawn from the spec's domains (see
	// heldout.go); 0 draws none.
	HeldOut int
	// Seed, when SeedSet, is the run's seed for held-out cases and fresh
	// seeds; otherwise a nonce is drawn for each run.
	Seed    uint64
	SeedSet bool
	// FreshSeeds gives the listed cases input seeds drawn for the run
	// instead of the spec's.
	FreshSeeds bool
	// Replay, when not nil, are the only cases judged (both parts), as
	// their tokens say (spec.ParseToken); no held-out cases are drawn.
	Replay []spec.Case
	// ShrinkAttempts bounds the runs that shrink a failing held-out case;
	// 0 means DefaultShrinkAttempts, below 0 no shrinking.
	ShrinkAttempts int
	// Parity is the rule a variant's outputs are compared with the
	// baseline's by: the zero Parity is bitwise (the default); a
	// tolerance rule (ulp=N, rel=X; see ParityMode) is opt-in, and every
	// result judged under it says whether it was bitwise and by how much
	// it was not (Result.Tolerance).
	Parity Parity
}

// A Variant is a modified copy of one of the spec's sources.
type Variant struct {
	Name string // or "" for the file name
	Path string // where it came from, for the report
	Text []byte
	Base string // the source it replaces; "" means the spec's main source
	// Edits, when not nil, are the edits that make Text from Base's
	// baseline text (a sweep's variants.Variant.Edits): a finding's
	// source lines are mapped back to the baseline's through them, to
	// tell the baseline's own findings from new ones. nil (or edits that
	// do not give Text) means the lines are mapped by a line diff.
	Edits []edit.Edit
	// Spec, when not nil, is the spec this variant runs under (a point of
	// the baseline's tunable parameters: other threads, threadgroups,
	// defines or constants); nil means Options.Spec. Its cases are the
	// baseline's cases of the same names, which must give the same inputs
	// and device buffers (see point.go); its threadgroup memory is judged
	// under its own stages; its outputs are compared with the baseline's.
	Spec *spec.Spec
}

// Status is the outcome of a variant or of the control.
type Status string

const (
	Pass         Status = "pass"
	FailParity   Status = "fail-parity"           // an output byte differs from the baseline
	FailRace     Status = "fail-race"             // two simd groups or threadgroups race, or outputs differ between thread orders
	FailUninit   Status = "fail-uninit"           // threadgroup memory read before any thread of the threadgroup wrote it
	FailLockstep Status = "fail-lockstep"         // lanes of one simd group conflict with no simd synchronisation, and the bytes differ (or Strict)
	FailTGMem    Status = "fail-tgmem"            // over the threadgroup memory limit; not run
	FailNondet   Status = "fail-nondeterministic" // two identical runs (of the baseline, or of a variant) differ
	CompileError Status = "compile-error"
	Refused      Status = "refused" // the source contains what a Metal kernel cannot (asm, host calls, ...)
	Sandbox      Status = "sandbox" // the kernel tried what the sandbox forbids
	Crash        Status = "crash"
	Timeout      Status = "timeout"
	BadAccess    Status = "bad-access"
	Deadlock     Status = "deadlock"
	Unavailable  Status = "unavailable"
	FailSpec     Status = "fail-spec"  // the variant's entry points no longer fit the spec
	NotJudged    Status = "not-judged" // the control failed
	// FailBuildsDisagree: on one backend, the checking build and the
	// plain build (the one that is timed) give different bytes.
	FailBuildsDisagree Status = "fail-builds-disagree"
	// Part statuses (Part.Status): a part turned off, a part not reached.
	NotVerified Status = "not-verified"
	NotRun      Status = "not-run"
	// Statuses check never gives, for the sweep that times variants: a
	// variant made only of operators that claim to keep outputs that
	// fails anyway (metalab's bug, not the variant's), and outputs read
	// back after timing that differ from the confirmed bytes.
	ProofViolated   Status = "proof-violated"
	FailAfterTiming Status = "fail-after-timing"
)

// A Report is the outcome of Run.
type Report struct {
	Spec         string   `json:"spec"`
	Source       string   `json:"source"`
	SourceSHA256 string   `json:"source_sha256"`
	Backend      string   `json:"backend"`
	Sets         []string `json:"sets"`
	DefaultSets  bool     `json:"default_sets"`         // Sets are the spec's defaults, none was named
	OtherSets    []string `json:"other_sets,omitempty"` // the spec's sets that did not run
	Cases        int      `json:"cases"`
	TGLimit      int      `json:"tg_limit"`
	Device       string   `json:"device,omitempty"`
	Detect       bool     `json:"detect"` // the checking mode ran (verification)
	// Verified says whether variants are verified; false with NoVerify or
	// no verification backend: every result is then "not verified".
	Verified       bool      `json:"verified"`
	VerifyBackend  string    `json:"verify_backend,omitempty"`
	VerifyDevice   string    `json:"verify_device,omitempty"`
	VerifySets     []string  `json:"verify_sets,omitempty"`
	VerifyCases    int       `json:"verify_cases"`
	StrictBaseline bool      `json:"strict_baseline,omitempty"`
	Notes          []string  `json:"notes,omitempty"`
	Strict         bool      `json:"strict,omitempty"`
	Race           bool      `json:"race"`
	Orders         []string  `json:"orders,omitempty"`
	Control        *Result   `json:"control"`
	Variants       []*Result `json:"variants"`
	Seconds        float64   `json:"seconds"`
	// HeldOut is how many held-out cases each variant is drawn (0: none,
	// the notes say so); HeldOutSeed the run's seed, to draw them again
	// with --seed.
	HeldOut     int    `json:"held_out"`
	HeldOutSeed string `json:"held_out_seed,omitempty"`
	FreshSeeds  bool   `json:"fresh_seeds,omitempty"`
	// Replayed are the cases of a replay (Options.Replay), by token.
	Replayed []string `json:"replayed,omitempty"`
	// Parity is the rule variants were compared with the baseline by:
	// "bitwise", or a tolerance rule ("ulp=4", "rel=1e-06").
	Parity string `json:"parity"`
}

// OK reports whether the control and every variant passed.
func (r *Report) OK() bool {
	if r.Control == nil || r.Control.Status != Pass {
		return false
	}
	for _, v := range r.Variants {
		if v.Status != Pass {
			return false
		}
	}
	return true
}

// A Result is the outcome for one variant, or for the control.
type Result struct {
	Name     string       `json:"name"`
	Path     string       `json:"path,omitempty"`
	SHA256   string       `json:"sha256,omitempty"`
	Status   Status       `json:"status"`
	Msg      string       `json:"msg,omitempty"` // one line about a failure
	Log      string       `json:"log,omitempty"` // compiler or runner output of a failure
	TGMem    []TGMem      `json:"tg_mem,omitempty"`
	Cases    []CaseResult `json:"cases,omitempty"`
	Mismatch *Mismatch    `json:"mismatch,omitempty"` // the first difference, or nil
	Warnings []string     `json:"warnings,omitempty"` // what the checking mode warned of, once each
	Dump     string       `json:"dump,omitempty"`     // where the first differing case was dumped
	Seconds  float64      `json:"seconds"`
	// Verified: the verification part ran and passed.
	Verified     bool `json:"verified"`
	Verification Part `json:"verification"`
	Confirmation Part `json:"confirmation"`
	// Stopped is the step the result stopped at: PartBuild,
	// PartVerification, PartConfirmation, or "" when it passed (or was
	// not judged).
	Stopped string `json:"stopped,omitempty"`
	// BaselineFindings (the control only) are the baseline's own findings,
	// once per source site: they do not fail the control nor a variant
	// that keeps them (unless Options.StrictBaseline).
	BaselineFindings []Finding `json:"baseline_findings,omitempty"`
	// HeldOut are the held-out cases the variant was judged on, or nil
	// when none were drawn.
	HeldOut *HeldOut `json:"held_out,omitempty"`
	// Replay is the command that replays the smallest failing drawn case.
	Replay string `json:"replay,omitempty"`
	// Tolerance, for a variant compared under a tolerance rule
	// (Options.Parity), says whether its outputs were bitwise after all,
	// and if not by how much they differ, over every case it ran; nil
	// under the bitwise rule, for the control, and for a variant that
	// stopped before any comparison.
	Tolerance *Tolerance `json:"tolerance,omitempty"`
	// Point is the path of the spec the variant ran under when it is not
	// the session's (Variant.Spec).
	Point string `json:"point,omitempty"`
}

// A TGMem is the static threadgroup memory of one stage, baseline → variant.
type TGMem struct {
	Entry        string `json:"entry"`
	Before       int    `json:"before"`        // compiled baseline, bytes
	After        int    `json:"after"`         // compiled variant, bytes
	SourceBefore int    `json:"source_before"` // estimate from the source; -1 unknown
	SourceAfter  int    `json:"source_after"`  // estimate from the source; -1 unknown
	// DynamicBefore and DynamicAfter are the bytes of the spec's
	// threadgroup buffers bound to the stage ([[threadgroup(n)]], the host's
	// setThreadgroupMemoryLength), the baseline's and the variant's (they
	// differ for a variant at another point of the spec, Variant.Spec).
	// The limit holds for static and dynamic bytes together.
	DynamicBefore int `json:"dynamic_before,omitempty"`
	DynamicAfter  int `json:"dynamic_after,omitempty"`
}

// dynamicTG is the bytes of the threadgroup buffers case in binds to
// stage st.
func dynamicTG(in *spec.Instance, st *spec.Stage) int {
	n := 0
	for _, bind := range st.Bindings {
		if b := in.Buffer(bind.Buffer); bind.Threadgroup && b != nil {
			n += b.Size
		}
	}
	return n
}

// A CaseResult is the outcome of one case.
type CaseResult struct {
	Case     string    `json:"case"` // set/name
	Status   Status    `json:"status"`
	Mismatch *Mismatch `json:"mismatch,omitempty"`
	Msg      string    `json:"msg,omitempty"`
	Findings []Finding `json:"findings,omitempty"` // the checking mode's, failures first
	// Tolerance: the case's comparison under a tolerance rule (see
	// Result.Tolerance); nil under the bitwise rule.
	Tolerance *Tolerance `json:"tolerance,omitempty"`
}

// A Mismatch describes the first differing element of an output buffer.
type Mismatch struct {
	Case      string `json:"case"`
	Order     string `json:"order,omitempty"` // for race differences: the order that differed from in-order
	Buffer    string `json:"buffer"`
	Type      string `json:"type"`
	Element   int    `json:"element"` // -1 when only the lengths differ
	Coords    []int  `json:"coords,omitempty"`
	Want      string `json:"want,omitempty"` // value and bytes, formatted by type
	Got       string `json:"got,omitempty"`
	Differing int    `json:"differing"` // elements that differ
	Elements  int    `json:"elements"`
	Msg       string `json:"msg,omitempty"`
	// Others are the other output buffers that differ, in spec order.
	Others []string `json:"other_buffers,omitempty"`
}

// String formats m as one line of the text report.
func (m *Mismatch) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "case %s", m.Case)
	if m.Order != "" {
		fmt.Fprintf(&b, " order %s", m.Order)
	}
	fmt.Fprintf(&b, ": buffer %s", m.Buffer)
	if m.Element >= 0 {
		fmt.Fprintf(&b, "%v (element %d, %s): want %s, got %s", m.Coords, m.Element, m.Type, m.Want, m.Got)
	}
	fmt.Fprintf(&b, "; %d of %d elements differ", m.Differing, m.Elements)
	if m.Msg != "" {
		b.WriteString("; " + m.Msg)
	}
	if len(m.Others) > 0 {
		b.WriteString("; also differ: " + strings.Join(m.Others, ", "))
	}
	return b.String()
}

// sourceTGMem estimates the static threadgroup memory of stage st from
// its source text, or returns -1 when the estimate is unknown. Estimates
// are kept by text and configuration, so a source is parsed once for all
// the cases and variants that share it.
func (c *checker) sourceTGMem(text []byte, st *spec.Stage) int {
	key := st.CompileKey(text)
	c.mu.Lock()
	n, ok := c.srcTG[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = -1
	if f, err := msl.ParseOptions(st.Source, text, msl.Options{Defines: st.Defines, IncludeDirs: st.IncludeDirs, ReadFile: inputfile.ReadFile}); err == nil {
		m, err := msl.ThreadgroupMemory(f, st.Entry, msl.Env{File: f, Defines: st.Defines})
		if err == nil && m.Known {
			n = int(m.Total)
		}
	}
	c.mu.Lock()
	c.srcTG[key] = n
	c.mu.Unlock()
	return n
}

// Default run limits when Options.Timeout is 0.
const (
	ControlTimeout       = 30 * time.Minute
	VariantTimeoutFactor = 10
	MinVariantTimeout    = time.Minute
)

type checker struct {
	opts Options
	run  backend.Backend // confirmation, and the programs that are timed
	ver  backend.Backend // verification in the checking mode; nil: not verified
	same bool            // ver is run: its checking build verifies, its plain build confirms
	// The verification's and the confirmation's cases, the baseline's
	// bytes of each (the references) and its slowest run of each.
	vinsts, insts []*spec.Instance
	vrefs, crefs  []map[string][]byte
	vtime, ctime  []time.Duration
	baseSites     map[string]bool // the baseline findings' sites
	// lockstepEntries: the entries in which the control relied on SIMD
	// lockstep, under the race probe (guarded by mu).
	lockstepEntries map[string]bool
	sources         map[string][]byte // baseline text by path
	base            *sourceSet        // the baseline's sources
	srcTG           map[string]int    // source estimates of threadgroup memory; see sourceTGMem
	seed            uint64            // the run's seed (Options.Seed or a nonce)

	mu         sync.Mutex // guards cache, compErr, inflight, srcTG, textNames, points, pointOf, maxThreads, lockstepEntries and the states
	points     map[pointKey]pointInst
	pointOf    map[*spec.Instance]bool // the instances in points
	textNames  map[string][]string     // the names a source's text was compiled under, by path and sha256
	maxThreads map[string]int          // the most threads per threadgroup of each stage (source and entry) over the listed cases
	cache      map[string]backend.Program
	compErr    map[string]error
	inflight   map[string]chan struct{} // compiles under way, closed when done
	// The baseline's states after its first stages, by case and stage
	// count (see confirmRun), and those being made; guarded by mu.
	states    map[stateKey]map[string][]byte
	stateBusy map[stateKey]chan struct{}
}

// A sourceSet is the text of every source a case's stages compile, as a
// variant (or the baseline) has them, and the names to report them by.
type sourceSet struct {
	texts map[string][]byte
	names map[string]string // display name of a replaced source, by path
	spec  *spec.Spec        // the variant's own spec (Variant.Spec), or nil for the baseline's
}

// A Session checks variants of one baseline: NewSession reads the
// sources, instantiates the cases, checks the spec against its kernels and
// runs the control once; then Check judges any number of variants, and
// Programs gives compiled programs for timing. Check may be called from
// several goroutines; compiles of the same source and stage are shared.
type Session struct {
	c       *checker
	control *Result
	report  Report // the fields every report of this session shares
}

// NewSession prepares a session and runs its control. An error is a tool
// error: a bad spec, an unreadable source, a cancelled context, a machine
// that cannot run the backend or the verification backend; a baseline
// that fails its own check is a control whose status is not Pass, and then
// Check judges nothing.
func NewSession(ctx context.Context, opts Options) (*Session, error) {
	if opts.Spec == nil || opts.Backend == nil {
		return nil, errors.New("check: need a spec and a backend")
	}
	if opts.TGLimit == 0 {
		opts.TGLimit = DefaultTGLimit
	}
	if opts.Orders == nil {
		opts.Orders = DefaultOrders
	}
	if opts.ReadFile == nil {
		opts.ReadFile = inputfile.ReadFile
	}
	info := opts.Backend.Info(ctx)
	c := &checker{opts: opts, run: opts.Backend, sources: map[string][]byte{}, cache: map[string]backend.Program{}, compErr: map[string]error{},
		srcTG: map[string]int{}, inflight: map[string]chan struct{}{}, baseSites: map[string]bool{}, textNames: map[string][]string{}}
	var notes []string
	var vinfo backend.Info
	switch {
	case opts.NoVerify || opts.NoDetect:
	case opts.Verify != nil && opts.Verify != opts.Backend:
		if ok, why := opts.Verify.Available(ctx); !ok {
			return nil, &backend.EnvError{Op: "verification backend " + opts.Verify.Name() + " is not available", Err: errors.New(why)}
		}
		vinfo = opts.Verify.Info(ctx)
		if !vinfo.Check {
			return nil, fmt.Errorf("the verification backend %s has no checking mode (verify on the cpu backend, or turn verification off)", vinfo.Name)
		}
		c.ver = opts.Verify
	case info.Check:
		c.ver, c.same, vinfo = opts.Backend, true, info
	default:
		notes = append(notes, fmt.Sprintf("the %s backend has no checking mode and no verification backend was given: variants are not verified "+
			"(their bytes are compared; races, uninitialised reads and bad accesses that leave them alone are not seen)", info.Name))
	}
	// The race probe runs where threads run in the order they are told: on
	// the verification backend, or without one on the run's.
	probe := info
	if c.ver != nil {
		probe = vinfo
	}
	if opts.Race && !probe.Orders {
		return nil, fmt.Errorf("the race probe needs a backend that runs threads in the order it is told; %s runs them in hardware order (run --race on the cpu backend)", probe.Name)
	}
	s := opts.Spec
	for _, st := range s.Stages {
		if _, ok := c.sources[st.Source]; ok {
			continue
		}
		text, err := opts.ReadFile(st.Source)
		if err != nil {
			return nil, &spec.Error{Pos: st.SourcePos, Msg: fmt.Sprintf("read baseline: %v", err)}
		}
		c.sources[st.Source] = text
	}
	c.base = &sourceSet{texts: c.sources}
	c.seed = runSeed(opts)
	byName := map[string]*spec.Instance{}
	instances := func(sets []string) ([]string, bool, []*spec.Instance, error) {
		defaults := false
		if len(sets) == 0 {
			sets, defaults = s.DefaultSets(), true
		}
		cases, err := s.Cases(sets...)
		if err != nil {
			return nil, false, nil, err
		}
		if opts.Replay != nil {
			cases, sets, defaults = opts.Replay, nil, false
			for _, cs := range cases {
				if err := s.CheckCase(cs); err != nil {
					return nil, false, nil, err
				}
				if !slices.Contains(sets, cs.Set) {
					sets = append(sets, cs.Set)
				}
			}
		}
		if opts.FreshSeeds {
			base := c.baseSeed()
			for i := range cases {
				if cases[i].Seed == 0 {
					cases[i] = spec.FreshSeed(cases[i], base)
				}
			}
		}
		var out []*spec.Instance
		for _, cs := range cases {
			name := cs.Set + "/" + cs.Name
			if in, ok := byName[name]; ok {
				out = append(out, in)
				continue
			}
			in, err := s.Instantiate(cs)
			if err != nil {
				return nil, false, nil, err
			}
			if c.metal() {
				// A spec that binds the wrong buffers or leaves a function
				// constant unset is refused before anything runs.
				if err := in.CheckKernels(c.baseline); err != nil {
					return nil, false, nil, err
				}
			}
			byName[name] = in
			out = append(out, in)
		}
		return sets, defaults, out, nil
	}
	sets, defaults, insts, err := instances(opts.Sets)
	if err != nil {
		return nil, err
	}
	c.insts = insts
	ss := &Session{c: c, report: Report{
		Spec: s.Path, Source: s.Source, SourceSHA256: sha(c.sources[s.Source]), Backend: opts.Backend.Name(),
		Sets: sets, DefaultSets: defaults, Cases: len(insts), TGLimit: opts.TGLimit, Race: opts.Race,
		Detect: c.ver != nil, Verified: c.ver != nil, Strict: opts.Strict, StrictBaseline: opts.StrictBaseline,
		Device: info.Device, Notes: notes, FreshSeeds: opts.FreshSeeds, Parity: opts.Parity.String(),
	}}
	switch {
	case opts.Replay != nil:
		for _, cs := range opts.Replay {
			ss.report.Replayed = append(ss.report.Replayed, cs.Token())
		}
		ss.report.Notes = append(ss.report.Notes, fmt.Sprintf("replay: %d case(s), no held-out cases drawn", len(opts.Replay)))
	case opts.HeldOut > 0 && s.HasDomains():
		ss.report.HeldOut = opts.HeldOut
		ss.report.HeldOutSeed = fmt.Sprintf("%d", c.seed)
	case s.HasDomains():
		ss.report.Notes = append(ss.report.Notes, "held-out cases are off (--held-out 0): variants are judged on the listed cases only")
	case opts.HeldOut > 0:
		ss.report.Notes = append(ss.report.Notes, "the spec declares no domains: no held-out cases are drawn, variants are judged on the listed cases only")
	}
	if c.ver != nil {
		vs := opts.VerifySets
		if len(vs) == 0 && c.same {
			vs = sets // one backend: both builds run every case
		}
		vsets, _, vinsts, err := instances(vs)
		if err != nil {
			return nil, err
		}
		c.vinsts = vinsts
		ss.report.VerifyBackend, ss.report.VerifyDevice = c.ver.Name(), vinfo.Device
		ss.report.VerifySets, ss.report.VerifyCases = vsets, len(vinsts)
	}
	for _, set := range s.Sets {
		if !slices.Contains(sets, set.Name) && !slices.Contains(ss.report.VerifySets, set.Name) {
			ss.report.OtherSets = append(ss.report.OtherSets, set.Name)
		}
	}
	if opts.Race {
		for _, o := range opts.Orders {
			ss.report.Orders = append(ss.report.Orders, o.String())
		}
	}
	ctl, err := c.control(ctx)
	if err != nil {
		c.close()
		return nil, err
	}
	ss.control = ctl
	return ss, nil
}

// Control returns the control's result.
func (s *Session) Control() *Result { return s.control }

// Instances returns the session's cases (the confirmation's), in order.
func (s *Session) Instances() []*spec.Instance { return s.c.insts }

// VerifyInstances returns the verification's cases, in order; none when
// variants are not verified.
func (s *Session) VerifyInstances() []*spec.Instance { return s.c.vinsts }

// Baseline returns the baseline text of the spec's main source.
func (s *Session) Baseline() []byte { return s.c.sources[s.c.opts.Spec.Source] }

// Check judges one variant. Only a cancelled context and environment
// faults are errors; everything the variant does wrong is its Result.
func (s *Session) Check(ctx context.Context, v Variant) (*Result, error) {
	r, err := s.c.variant(ctx, v, s.control.Status == Pass)
	if err == nil && r != nil {
		s.c.replayListed(r)
	}
	return r, err
}

// Instance returns the instance variant v runs case in under: in itself
// when v is nil or has no spec of its own (Variant.Spec), else the
// instance of in's case from v's spec (an error when that spec cannot
// give one that compares with in; the variant's result is then
// fail-spec). Run a point's programs (Programs) on this instance: its
// stages have the point's threads and threadgroups.
func (s *Session) Instance(v *Variant, in *spec.Instance) (*spec.Instance, error) {
	if v == nil {
		return in, nil
	}
	ps := s.c.pointSpec(*v)
	if ps == nil {
		return in, nil
	}
	return s.c.pointInstance(ps, in)
}

// Programs returns the plain (not checking-mode) programs of case in's
// stages on the run's backend, built from v's sources, or from the
// baseline's when v is nil, for timing: the programs whose bytes the
// confirmation compared. For a variant with a spec of its own, in may be
// the session's instance or the variant's (Instance): the programs are
// the variant's stages'.
func (s *Session) Programs(ctx context.Context, v *Variant, in *spec.Instance) ([]backend.Program, error) {
	return s.StagePrograms(ctx, v, in, len(in.Stages))
}

// StagePrograms is Programs for the first n stages of in only: what
// ExecOptions.Stages runs, without compiling the stages after them.
func (s *Session) StagePrograms(ctx context.Context, v *Variant, in *spec.Instance, n int) ([]backend.Program, error) {
	if n < 0 || n > len(in.Stages) {
		return nil, fmt.Errorf("programs: %d stages asked for, the case has %d", n, len(in.Stages))
	}
	src := s.c.base
	if v != nil {
		base := v.Base
		if base == "" {
			base = s.c.opts.Spec.Source
		}
		src = s.c.variantSources(base, *v, v.Name)
		pin, err := s.c.instance(src, in)
		if err != nil {
			return nil, err
		}
		in = pin
	}
	progs, err := s.c.programs(ctx, s.c.run, src, in.Stages[:n], false)
	if err != nil {
		return nil, err
	}
	return progs, nil
}

// Close releases every compiled program.
func (s *Session) Close() { s.c.close() }

// Run checks the variants of opts against the baseline: a Session, each
// variant checked in turn (opts.Jobs at once). When ctx is cancelled it
// returns the report of the variants judged so far, up to the first one
// not judged, along with the error.
func Run(ctx context.Context, opts Options) (*Report, error) {
	start := time.Now()
	ss, err := NewSession(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	rep := ss.report
	rep.Control = ss.control
	results := make([]*Result, len(opts.Variants))
	errs := make([]error, len(opts.Variants))
	jobs := min(max(opts.Jobs, 1), len(opts.Variants))
	next := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = ss.Check(ctx, opts.Variants[i])
			}
		}()
	}
	for i := range opts.Variants {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	rep.Seconds = time.Since(start).Seconds()
	for i, r := range results {
		if errs[i] != nil {
			if ctx.Err() != nil {
				// Interrupted: the variants judged before it stand.
				return &rep, errs[i]
			}
			return nil, errs[i]
		}
		if r == nil {
			// Not started: ctx was cancelled before its turn.
			return &rep, ctx.Err()
		}
		rep.Variants = append(rep.Variants, r)
	}
	return &rep, nil
}

func (c *checker) close() {
	for _, p := range c.cache {
		p.Close()
	}
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// metal reports whether the backend compiles Metal (test doubles run
// marker scripts, against which a spec's kernel interface cannot be
// checked).
func (c *checker) metal() bool {
	if m, ok := c.opts.Backend.(interface{ MetalSources() bool }); ok {
		return m.MetalSources()
	}
	return true
}

// baseline returns the baseline text of a source path, for CheckKernels.
func (c *checker) baseline(path string) ([]byte, error) {
	if t, ok := c.sources[path]; ok {
		return t, nil
	}
	return c.opts.ReadFile(path)
}

// dispatchThreads is the most threads per threadgroup stage st's program
// is dispatched with: over every listed case's instance of the stage (same
// source and entry), and st's own. A backend may compile for that many
// (backend.Source.MaxThreads); one number per stage keeps it one compile.
func (c *checker) dispatchThreads(st *spec.Stage) int {
	key := st.Source + "\x00" + st.Entry
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.maxThreads == nil {
		c.maxThreads = map[string]int{}
		for _, in := range c.union() {
			for _, s := range in.Stages {
				k := s.Source + "\x00" + s.Entry
				c.maxThreads[k] = max(c.maxThreads[k], s.Threads.Count())
			}
		}
	}
	return max(c.maxThreads[key], st.Threads.Count())
}

// compile compiles stage st with the sources of src on backend be, for
// the checking mode or not, caching by backend, text, entry,
// configuration and mode. It may be called from several goroutines: one
// compile per key runs, the others wait for it.
func (c *checker) compile(ctx context.Context, be backend.Backend, src *sourceSet, st *spec.Stage, detect bool) (backend.Program, error) {
	text := src.texts[st.Source]
	key := st.CompileKey(text)
	if detect {
		key += "\x00check"
	}
	threads := c.dispatchThreads(st)
	key += "\x00threads=" + strconv.Itoa(threads)
	if be != c.run {
		key = "verify\x00" + key
	}
	for {
		c.mu.Lock()
		if p, ok := c.cache[key]; ok {
			c.mu.Unlock()
			return p, nil
		}
		if err, ok := c.compErr[key]; ok {
			c.mu.Unlock()
			return nil, err
		}
		wait, busy := c.inflight[key]
		if !busy {
			c.inflight[key] = make(chan struct{})
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	name := st.Source
	if n, ok := src.names[st.Source]; ok && !bytes.Equal(text, c.sources[st.Source]) {
		name = n
	}
	c.mu.Lock()
	// Programs are shared by text: a finding names the file by the name
	// of the compile that made it, which variants with the same text
	// share (see mapper).
	tk := st.Source + "\x00" + sha(text)
	if !slices.Contains(c.textNames[tk], name) {
		c.textNames[tk] = append(c.textNames[tk], name)
	}
	c.mu.Unlock()
	p, err := be.Compile(ctx, backend.Source{
		Name: name, Text: text, Dir: filepath.Dir(st.Source), IncludeDirs: st.IncludeDirs, Entry: st.Entry,
		Defines: st.Defines, Constants: st.Constants, Check: detect, MaxThreads: threads,
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.inflight[key])
	delete(c.inflight, key)
	if err != nil {
		if ctx.Err() == nil {
			c.compErr[key] = err
		}
		return nil, err
	}
	c.cache[key] = p
	return p, nil
}

// programs compiles stages (a case's, or the first of them).
func (c *checker) programs(ctx context.Context, be backend.Backend, src *sourceSet, stages []*spec.Stage, detect bool) ([]backend.Program, error) {
	var progs []backend.Program
	for _, st := range stages {
		p, err := c.compile(ctx, be, src, st, detect)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", st.Entry, err)
		}
		progs = append(progs, p)
	}
	return progs, nil
}

// failure turns a kernel failure into a status; other errors are returned.
// A backend that cannot run here is the machine's fault, not a kernel's.
func failure(r *Result, err error) error {
	var f *backend.Failure
	if !errors.As(err, &f) {
		return err
	}
	if f.Kind == backend.Unavailable {
		return &backend.EnvError{Op: "check", Err: err}
	}
	r.Status = Status(f.Kind)
	r.Msg = err.Error()
	r.Log = f.Log
	return nil
}

// record makes err the variant's result: a kernel failure keeps its kind,
// any other error (a translator that rejects the variant, a runner that
// reports nonsense) becomes kind, so that one bad variant cannot stop the
// others from being judged. Only a cancelled context and environment
// faults are returned.
func (c *checker) record(ctx context.Context, r *Result, kind Status, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("variant %s: %w", r.Name, err)
	}
	var env *backend.EnvError
	if errors.As(err, &env) {
		return err
	}
	if ferr := failure(r, err); ferr != nil {
		if errors.As(ferr, &env) {
			return ferr
		}
		r.Status, r.Msg = kind, err.Error()
	}
	return nil
}

// variantSources is the baseline's sources with base replaced by v.
func (c *checker) variantSources(base string, v Variant, name string) *sourceSet {
	src := &sourceSet{texts: map[string][]byte{}, names: map[string]string{base: v.Path}, spec: c.pointSpec(v)}
	for k, t := range c.sources {
		src.texts[k] = t
	}
	src.texts[base] = v.Text
	if v.Path == "" {
		src.names[base] = name
	}
	return src
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func hasTG(list []TGMem, t TGMem) bool {
	for _, x := range list {
		if x == t {
			return true
		}
	}
	return false
}
