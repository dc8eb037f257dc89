package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"metalab/backend"
	"metalab/internal/edit"
	"metalab/msl"
	"metalab/spec"
)

// DefaultTGLimit is the static threadgroup memory limit in bytes.
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
	// VerifySets are the verification's case sets; nil means the spec's
	// DefaultSets.
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
	// ReadFile reads the baseline sources; nil means os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// Progress, if set, is told what runs: one line per case of each
	// variant.
	Progress func(msg string)
	// DumpDir, if set, receives for each variant that fails parity the
	// first differing case: its inputs and the baseline's and the
	// variant's outputs as .npy files, in DumpDir/<variant>/ (see Dump).
	DumpDir string
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
	FailNondet   Status = "fail-nondeterministic" // control only: two baseline runs differ
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
}

// A TGMem is the static threadgroup memory of one stage, baseline → variant.
type TGMem struct {
	Entry        string `json:"entry"`
	Before       int    `json:"before"`        // compiled baseline, bytes
	After        int    `json:"after"`         // compiled variant, bytes
	SourceBefore int    `json:"source_before"` // estimate from the source; -1 unknown
	SourceAfter  int    `json:"source_after"`  // estimate from the source; -1 unknown
}

// A CaseResult is the outcome of one case.
type CaseResult struct {
	Case     string    `json:"case"` // set/name
	Status   Status    `json:"status"`
	Mismatch *Mismatch `json:"mismatch,omitempty"`
	Msg      string    `json:"msg,omitempty"`
	Findings []Finding `json:"findings,omitempty"` // the checking mode's, failures first
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
	if f, err := msl.ParseOptions(st.Source, text, msl.Options{Defines: st.Defines, IncludeDirs: st.IncludeDirs, ReadFile: os.ReadFile}); err == nil {
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
	opts     Options
	baseTime []time.Duration // slowest baseline run per case, by instance index
	insts    []*spec.Instance
	sources  map[string][]byte // baseline text by path
	base     *sourceSet        // the baseline's sources
	srcTG    map[string]int    // source estimates of threadgroup memory; see sourceTGMem

	mu       sync.Mutex // guards cache, compErr, inflight and srcTG
	cache    map[string]backend.Program
	compErr  map[string]error
	inflight map[string]chan struct{} // compiles under way, closed when done
}

// A sourceSet is the text of every source a case's stages compile, as a
// variant (or the baseline) has them, and the names to report them by.
type sourceSet struct {
	texts map[string][]byte
	names map[string]string // display name of a replaced source, by path
}

// A Session checks variants of one baseline: NewSession reads the
// sources, instantiates the cases, checks the spec against its kernels and
// runs the control once; then Check judges any number of variants, and
// Programs gives compiled programs for timing. Check may be called from
// several goroutines; compiles of the same source and stage are shared.
type Session struct {
	c       *checker
	refs    []map[string][]byte
	control *Result
	report  Report // the fields every report of this session shares
}

// NewSession prepares a session and runs its control. An error is a tool
// error: a bad spec, an unreadable source, a cancelled context, a machine
// that cannot run the backend; a baseline that fails its own check is a
// control whose status is not Pass, and then Check judges nothing.
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
		opts.ReadFile = os.ReadFile
	}
	info := opts.Backend.Info(ctx)
	if opts.Race && !info.Orders {
		return nil, fmt.Errorf("the race probe needs a backend that runs threads in the order it is told; %s runs them in hardware order (run --race on the cpu backend)", info.Name)
	}
	var notes []string
	if !opts.NoDetect && !info.Check {
		opts.NoDetect = true
		notes = append(notes, fmt.Sprintf("the %s backend has no checking mode: bytes are compared, races, uninitialised reads and bad accesses that leave them alone are not seen (check on the cpu backend for those)", info.Name))
	}
	s := opts.Spec
	c := &checker{opts: opts, sources: map[string][]byte{}, cache: map[string]backend.Program{}, compErr: map[string]error{},
		srcTG: map[string]int{}, inflight: map[string]chan struct{}{}}
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
	sets, defaults := opts.Sets, false
	if len(sets) == 0 {
		sets, defaults = s.DefaultSets(), true
	}
	cases, err := s.Cases(sets...)
	if err != nil {
		return nil, err
	}
	for _, cs := range cases {
		in, err := s.Instantiate(cs)
		if err != nil {
			return nil, err
		}
		if c.metal() {
			// A spec that binds the wrong buffers or leaves a function
			// constant unset is refused before anything runs.
			if err := in.CheckKernels(c.baseline); err != nil {
				return nil, err
			}
		}
		c.insts = append(c.insts, in)
	}
	ss := &Session{c: c, report: Report{
		Spec: s.Path, Source: s.Source, SourceSHA256: sha(c.sources[s.Source]), Backend: opts.Backend.Name(),
		Sets: sets, DefaultSets: defaults, Cases: len(cases), TGLimit: opts.TGLimit, Race: opts.Race,
		Detect: !opts.NoDetect, Strict: opts.Strict, Device: info.Device, Notes: notes,
	}}
	for _, set := range s.Sets {
		if !slices.Contains(sets, set.Name) {
			ss.report.OtherSets = append(ss.report.OtherSets, set.Name)
		}
	}
	if opts.Race {
		for _, o := range opts.Orders {
			ss.report.Orders = append(ss.report.Orders, o.String())
		}
	}
	refs, ctl, err := c.control(ctx)
	if err != nil {
		c.close()
		return nil, err
	}
	ss.refs, ss.control = refs, ctl
	return ss, nil
}

// Control returns the control's result.
func (s *Session) Control() *Result { return s.control }

// Instances returns the session's cases, in order.
func (s *Session) Instances() []*spec.Instance { return s.c.insts }

// Baseline returns the baseline text of the spec's main source.
func (s *Session) Baseline() []byte { return s.c.sources[s.c.opts.Spec.Source] }

// Check judges one variant. Only a cancelled context and environment
// faults are errors; everything the variant does wrong is its Result.
func (s *Session) Check(ctx context.Context, v Variant) (*Result, error) {
	return s.c.variant(ctx, v, s.refs, s.control.Status == Pass)
}

// Programs returns the plain (not checking-mode) programs of case in's
// stages, built from v's sources, or from the baseline's when v is nil, for
// timing.
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
	}
	progs, err := s.c.programs(ctx, src, in.Stages[:n], false)
	if err != nil {
		return nil, err
	}
	return progs, nil
}

// Close releases every compiled program.
func (s *Session) Close() { s.c.close() }

// Run checks the variants of opts against the baseline: a Session, each
// variant checked in turn. When ctx is cancelled between variants it
// returns the report of the variants judged so far along with the error.
func Run(ctx context.Context, opts Options) (*Report, error) {
	start := time.Now()
	ss, err := NewSession(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	rep := ss.report
	rep.Control = ss.control
	for _, v := range opts.Variants {
		r, err := ss.Check(ctx, v)
		if err != nil {
			rep.Seconds = time.Since(start).Seconds()
			if ctx.Err() != nil {
				// Interrupted: the variants judged so far stand.
				return &rep, err
			}
			return nil, err
		}
		rep.Variants = append(rep.Variants, r)
	}
	rep.Seconds = time.Since(start).Seconds()
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

// compile compiles stage st with the sources of src, for the checking
// mode or not, caching by text, entry, configuration and mode. It may be
// called from several goroutines: one compile per key runs, the others
// wait for it.
func (c *checker) compile(ctx context.Context, src *sourceSet, st *spec.Stage, detect bool) (backend.Program, error) {
	text := src.texts[st.Source]
	key := st.CompileKey(text)
	if detect {
		key += "\x00check"
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
	p, err := c.opts.Backend.Compile(ctx, backend.Source{
		Name: name, Text: text, Dir: filepath.Dir(st.Source), IncludeDirs: st.IncludeDirs, Entry: st.Entry,
		Defines: st.Defines, Constants: st.Constants, Check: detect,
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
func (c *checker) programs(ctx context.Context, src *sourceSet, stages []*spec.Stage, detect bool) ([]backend.Program, error) {
	var progs []backend.Program
	for _, st := range stages {
		p, err := c.compile(ctx, src, st, detect)
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

// judge runs case in with the programs of one variant (or the baseline):
// once in the checking mode (or plainly, without it) and, with the race
// probe, under every order. It returns the outputs and the case's result;
// a kernel failure is the case's result too.
func (c *checker) judge(ctx context.Context, src *sourceSet, in *spec.Instance, want map[string][]byte, limit time.Duration) (map[string][]byte, CaseResult, error) {
	name := in.Case.Set + "/" + in.Case.Name
	cr := CaseResult{Case: name, Status: Pass}
	detect := !c.opts.NoDetect
	progs, err := c.programs(ctx, src, in.Stages, detect)
	if err != nil {
		return nil, cr, err
	}
	ex, err := ExecuteCase(ctx, progs, in, ExecOptions{Order: backend.Order{Kind: "in-order"}, Timeout: limit})
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) && len(f.Findings) > 0 {
			var se *StageError
			stage := 0
			if errors.As(err, &se) {
				stage = se.Stage
			}
			var sfs []StageFinding
			for _, x := range f.Findings {
				sfs = append(sfs, StageFinding{Stage: stage, Entry: in.Stages[stage].Entry, Finding: x})
			}
			cr.Findings = describeFindings(in, name, sfs, c.opts.Strict)
		}
		return nil, cr, err
	}
	got := ex.Outputs
	cr.Findings = describeFindings(in, name, ex.Findings(), c.opts.Strict)
	for _, f := range cr.Findings {
		if st := findingStatus(f.Kind, c.opts.Strict); st != "" {
			cr.Status, cr.Msg = st, f.Msg
			break
		}
	}
	if cr.Status == Pass && want != nil {
		if m := Compare(in, want, got); m != nil {
			cr.Status, cr.Mismatch = FailParity, m
			// Bytes that differ where the variant relies on SIMD lockstep
			// say nothing about a GPU: the emulator runs a simd group's
			// lanes one after another, so it cannot give the bytes lanes
			// in lockstep would. The verdict names the reliance instead.
			for _, f := range cr.Findings {
				if f.Kind == backend.FindLockstep {
					cr.Status = FailLockstep
					cr.Msg = "the bytes differ and the variant relies on SIMD lockstep, which the cpu emulator does not reproduce " +
						"(it runs a simd group's lanes one after another): restore the simd-group synchronisation, or judge it on a GPU; " + f.Msg
					break
				}
			}
		}
	}
	if cr.Status == Pass && c.opts.Race {
		plain, err := c.programs(ctx, src, in.Stages, false)
		if err != nil {
			return nil, cr, err
		}
		m, err := c.orders(ctx, plain, in, got, limit)
		if err != nil {
			return nil, cr, err
		}
		if m != nil {
			cr.Status, cr.Mismatch = FailRace, m
		}
	}
	return got, cr, nil
}

// addCase appends cr to r, taking its status and message if r still passes,
// and collects its warnings.
func addCase(r *Result, cr CaseResult) {
	r.Cases = append(r.Cases, cr)
	if cr.Status != Pass && r.Status == Pass {
		r.Status, r.Mismatch = cr.Status, cr.Mismatch
		if cr.Msg != "" {
			r.Msg = cr.Msg
		}
	}
	for _, f := range cr.Findings {
		if f.Warning && !slices.Contains(r.Warnings, f.Msg) && len(r.Warnings) < 20 {
			r.Warnings = append(r.Warnings, f.Msg)
		}
	}
}

func (c *checker) progress(format string, args ...any) {
	if c.opts.Progress != nil {
		c.opts.Progress(fmt.Sprintf(format, args...))
	}
}

// control runs the baseline on every case: plainly, for the reference
// outputs, then in the checking mode (whose bytes must be the same, and
// whose findings must be clean), or without it plainly once more; with the
// race probe also under every order. It returns the reference outputs by
// case.
func (c *checker) control(ctx context.Context) ([]map[string][]byte, *Result, error) {
	start := time.Now()
	r := &Result{Name: "control", Path: c.opts.Spec.Source, SHA256: sha(c.sources[c.opts.Spec.Source]), Status: Pass}
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	var refs []map[string][]byte
	for i, in := range c.insts {
		c.progress("control: case %d/%d %s/%s", i+1, len(c.insts), in.Case.Set, in.Case.Name)
		progs, err := c.programs(ctx, c.base, in.Stages, false)
		if err != nil {
			return nil, r, failure(r, err)
		}
		for j, st := range in.Stages {
			n := progs[j].ThreadgroupMemory()
			src := c.sourceTGMem(c.sources[st.Source], st)
			tg := TGMem{Entry: st.Entry, Before: n, After: n, SourceBefore: src, SourceAfter: src}
			if !hasTG(r.TGMem, tg) {
				r.TGMem = append(r.TGMem, tg)
			}
		}
		limit := c.opts.Timeout
		if limit == 0 {
			limit = ControlTimeout
		}
		t0 := time.Now()
		first, err := Execute(ctx, progs, in, backend.Order{Kind: "in-order"}, limit)
		if err != nil {
			return nil, r, failure(r, err)
		}
		c.baseTime = append(c.baseTime, time.Since(t0))
		refs = append(refs, first)
		_, cr, err := c.judge(ctx, c.base, in, first, limit)
		if err != nil {
			if ferr := failure(r, err); ferr != nil {
				return nil, r, ferr
			}
			cr.Status, cr.Msg = r.Status, r.Msg
			if len(cr.Findings) > 0 && !cr.Findings[0].Warning {
				r.Msg, cr.Msg = cr.Findings[0].Msg, cr.Findings[0].Msg
			}
		}
		if cr.Status == FailParity {
			// The same kernel gave other bytes: the harness, the kernel or
			// the checking build is not deterministic.
			cr.Status = FailNondet
		}
		addCase(r, cr)
	}
	if r.Status != Pass {
		r.Msg = "the baseline fails its own check (" + string(r.Status) + "): variants are not judged; " + r.Msg
	}
	return refs, r, nil
}

// variantTimeout is the limit for one run of case i of a variant.
func (c *checker) variantTimeout(i int) time.Duration {
	if c.opts.Timeout != 0 {
		return c.opts.Timeout
	}
	if i >= len(c.baseTime) {
		return ControlTimeout
	}
	return max(MinVariantTimeout, VariantTimeoutFactor*c.baseTime[i])
}

// orders runs in under every race-probe order other than in-order and
// returns the first difference from want.
func (c *checker) orders(ctx context.Context, progs []backend.Program, in *spec.Instance, want map[string][]byte, limit time.Duration) (*Mismatch, error) {
	for _, o := range c.opts.Orders {
		if o.Kind == "" || o.Kind == "in-order" {
			continue
		}
		got, err := Execute(ctx, progs, in, o, limit)
		if err != nil {
			return nil, err
		}
		if m := Compare(in, want, got); m != nil {
			m.Order = o.String()
			return m, nil
		}
	}
	return nil, nil
}

func (c *checker) variant(ctx context.Context, v Variant, refs []map[string][]byte, judge bool) (*Result, error) {
	start := time.Now()
	s := c.opts.Spec
	r := &Result{Name: v.Name, Path: v.Path, SHA256: sha(v.Text), Status: Pass}
	if r.Name == "" {
		r.Name = filepath.Base(v.Path)
	}
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	base := v.Base
	if base == "" {
		base = s.Source
	}
	if _, ok := c.sources[base]; !ok {
		return nil, fmt.Errorf("variant %s: no stage uses source %s", r.Name, base)
	}
	src := c.variantSources(base, v, r.Name)
	texts := src.texts
	if !judge {
		r.Status = NotJudged
		r.Msg = "the control failed"
		return r, nil
	}
	if c.metal() {
		for _, in := range c.insts {
			err := in.CheckKernels(func(path string) ([]byte, error) {
				if t, ok := texts[path]; ok {
					return t, nil
				}
				return c.opts.ReadFile(path)
			})
			if err != nil {
				r.Status, r.Msg = FailSpec, "the variant no longer fits the spec: "+firstLine(err.Error())
				r.Log = err.Error()
				return r, nil
			}
		}
	}
	// Compile every stage configuration the cases need, and measure
	// threadgroup memory before running anything.
	detect := !c.opts.NoDetect
	seen := map[string]bool{}
	for _, in := range c.insts {
		for _, st := range in.Stages {
			key := st.Entry + "\x00" + st.ConfigKey()
			if seen[key] {
				continue
			}
			seen[key] = true
			after, err := c.compile(ctx, src, st, detect)
			if err != nil {
				return r, c.record(ctx, r, CompileError, fmt.Errorf("compile %s: %w", st.Entry, err))
			}
			before, err := c.compile(ctx, c.base, st, false)
			if err != nil {
				return nil, fmt.Errorf("baseline compile %s: %w", st.Entry, err)
			}
			if st.Source != base {
				continue
			}
			tg := TGMem{
				Entry: st.Entry, Before: before.ThreadgroupMemory(), After: after.ThreadgroupMemory(),
				SourceBefore: c.sourceTGMem(c.sources[st.Source], st), SourceAfter: c.sourceTGMem(v.Text, st),
			}
			if !hasTG(r.TGMem, tg) {
				r.TGMem = append(r.TGMem, tg)
			}
			if tg.After > c.opts.TGLimit && r.Status == Pass {
				r.Status = FailTGMem
				r.Msg = fmt.Sprintf("%s: %d bytes of threadgroup memory, limit %d", st.Entry, tg.After, c.opts.TGLimit)
			}
		}
	}
	if r.Status != Pass {
		return r, nil
	}
	for i, in := range c.insts {
		c.progress("%s: case %d/%d %s/%s", r.Name, i+1, len(c.insts), in.Case.Set, in.Case.Name)
		got, cr, err := c.judge(ctx, src, in, refs[i], c.variantTimeout(i))
		if err == nil && cr.Status == FailParity && c.opts.DumpDir != "" && r.Dump == "" {
			dir := filepath.Join(c.opts.DumpDir, fileName(r.Name))
			index := DumpIndex{Spec: s.Path, Source: base, Variant: v.Path, Backend: c.opts.Backend.Name()}
			if err := Dump(dir, index, in, []DumpRun{{Label: "baseline", Bytes: refs[i]}, {Label: "variant", Bytes: got}}); err != nil {
				return nil, fmt.Errorf("dump %s: %w", r.Name, err)
			}
			r.Dump = dir
		}
		if err != nil {
			if err := c.record(ctx, r, Crash, err); err != nil {
				return nil, err
			}
			cr.Status, cr.Msg = r.Status, r.Msg
			if len(cr.Findings) > 0 && !cr.Findings[0].Warning {
				// The checking mode stopped the run: its finding says more
				// than the backend's one line.
				r.Msg, cr.Msg = cr.Findings[0].Msg, cr.Findings[0].Msg
			}
			addCase(r, cr)
			return r, nil // a crashing variant is not run further
		}
		addCase(r, cr)
	}
	return r, nil
}

// variantSources is the baseline's sources with base replaced by v.
func (c *checker) variantSources(base string, v Variant, name string) *sourceSet {
	src := &sourceSet{texts: map[string][]byte{}, names: map[string]string{base: v.Path}}
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
