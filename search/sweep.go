package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"metalab/backend"
	"metalab/check"
	"metalab/internal/edit"
	"metalab/internal/inputfile"
	"metalab/measure"
	"metalab/msl"
	"metalab/patches"
	"metalab/report"
	"metalab/search/store"
	"metalab/spec"
	"metalab/variants"
)

// Files and directories of a sweep's output directory.
const (
	PlanFile     = "plan.json"
	StoreFile    = "results.db"
	ManifestFile = "manifest.json"
	BaselineDir  = "baseline"
	VariantsDir  = "variants"
	LogsDir      = "logs"
	PatchesDir   = "patches"
)

// Options configure Run.
type Options struct {
	Plan    *Plan
	Spec    *spec.Spec
	File    *msl.File // the kernel (Plan.Kernel) as parsed with Plan.Macros
	Backend backend.Backend
	// Verify is the verification backend the plan names
	// (Plan.Verify.Backend, "cpu"): every variant runs there in the
	// checking mode before it is confirmed and timed on Backend. nil
	// means Backend's own checking mode, for a plan that names none.
	Verify backend.Backend
	// Dir is the output directory: new, empty, or (with Resume) a sweep
	// of the same plan to continue.
	Dir    string
	Resume bool
	// Repo, when set, is the repository patches are verified against: its
	// Plan.Path must still have the baseline's sha256.
	Repo  string
	Shard Shard
	// WorkDir is the directory the plan's relative paths are relative to,
	// for the manifest; "" means the working directory.
	WorkDir  string
	Version  string                       // metalab's version, for the manifest
	ReadFile func(string) ([]byte, error) // reads the spec's sources; nil means inputfile.ReadFile
	Progress func(Event)                  // optional
	// Jobs is the size of the pool that checks the variants to come
	// (compile, verification, confirmation) while the current one is
	// timed; 0 or 1: none, every variant checked in turn. The results are
	// the same either way (see doc.go, "Pipeline").
	Jobs int
	// PauseDuringSamples makes the pool's compiles and runs wait while a
	// sample is timed, so that nothing runs beside it on the host.
	PauseDuringSamples bool
	Log                func(variant, line string)      // optional: every line written to a variant's log
	now                func() time.Time                // for tests; nil means time.Now
	onResult           func(stage string, k store.Key) // for tests: a result was taken (not read back)
	onSample           func(begin bool)                // for tests: a timed sample starts or ends (with a pool)
}

// An Event says how far a sweep is: Stage is "control", "explore",
// "confirm", "decide" or "report"; Done of Total steps (Total 0 when not
// known in advance); the variant concerned and a line about it.
type Event struct {
	Stage   string
	Done    int
	Total   int
	Variant string
	Msg     string
	// Pipeline is the pool's state when the sweep runs one (Options.Jobs
	// > 1), else nil. Events of Stage "pipeline" say only that it changed.
	Pipeline *Pipeline
}

// A Result is what a sweep came to.
type Result struct {
	Dir    string `json:"dir"`
	Report string `json:"report"` // report.md
	Store  string `json:"store"`
	Plan   string `json:"plan_sha256"`
	// Variants counts the variants this shard built and evaluated;
	// Failed those that failed to build, their verification or their
	// confirmation; ProofViolated those of them made only of operators
	// that claim to keep outputs (metalab's bug, counted apart from
	// Failed); FailedAfterTiming those whose outputs read back after a
	// measurement differed from the baseline's.
	Variants          int `json:"variants"`
	Failed            int `json:"failed"`
	ProofViolated     int `json:"proof_violated"`
	FailedAfterTiming int `json:"failed_after_timing"`
	Explored          int `json:"explored"`
	Confirmed         int `json:"confirmed"`
	// Verified says whether variants were verified; Verification says
	// where and how, or "not verified".
	Verified     bool   `json:"verified"`
	Verification string `json:"verification"`
	// Retained are the variants the rule retained, with their patches.
	Retained     []Retained `json:"retained"`
	Rejected     int        `json:"rejected"`
	Inconclusive int        `json:"inconclusive"`
	Pending      int        `json:"pending"` // confirmed but not decided: a budget ran out
	// Budget says which budget ran out, or "".
	Budget string `json:"budget,omitempty"`
	// Parity is the rule outputs were compared by: "bitwise", or the
	// tolerance (--parity) with NotBitwise the variants it passed whose
	// outputs were not bitwise identical.
	Parity     string `json:"parity"`
	NotBitwise int    `json:"not_bitwise,omitempty"`
	// Dispatches, when set, is the --dispatches this sweep's samples
	// call for: some measurement was contaminated and its samples were
	// shorter than measure.MinSampleTime; Suggest says so in words.
	Dispatches int    `json:"suggest_dispatches,omitempty"`
	Suggest    string `json:"suggest,omitempty"`
	// Control is the baseline's own check: "pass", or why no variant was
	// judged. BaselineFindings counts what the checking mode found in the
	// baseline itself (once per source site): reported, not stopping.
	Control          string `json:"control"`
	BaselineFindings int    `json:"baseline_findings"`
	// TimingSeconds is the wall time this run spent in measurements
	// (warm-ups and pairs, the samplers' set-up included);
	// SampleSeconds the part of it the samples' clock counted (GPU time
	// on a GPU backend). Their ratio says how much of the timing phase
	// the tool's own overhead took.
	TimingSeconds float64 `json:"timing_seconds"`
	SampleSeconds float64 `json:"sample_seconds"`
	// RunSeconds is the wall time of the samples' runs on the backend
	// (the requests, the dispatches and their clock, the waits for the
	// device between them), StoreSeconds the time the pairs took to be
	// written to the store: where a low share goes.
	RunSeconds   float64 `json:"run_seconds"`
	StoreSeconds float64 `json:"store_seconds"`
	// CheckSeconds is the wall time this run spent building, verifying
	// and confirming (the control's included); VerifySeconds and
	// ConfirmSeconds the parts of it check counted as verifying (the
	// checking mode's runs on the verification backend) and confirming
	// (the plain build's runs on the timing backend); the rest is mostly
	// compiling.
	CheckSeconds   float64 `json:"check_seconds"`
	VerifySeconds  float64 `json:"verify_seconds"`
	ConfirmSeconds float64 `json:"confirm_seconds"`
	// RunnerStarts counts the runner processes the timing backend started
	// in this run (a backend.RunnerCounter; 0 for others) and
	// RunnerStartSeconds their starts' wall time summed: far more starts
	// than programs mean programs evicting one another's runners.
	RunnerStarts       int64   `json:"runner_starts"`
	RunnerStartSeconds float64 `json:"runner_start_seconds"`
	// RunnerRequests is what the timing backend's runner requests cost
	// in this run, by type: the samples' and confirmations' time between
	// the kernels' own.
	RunnerRequests []backend.RequestStat `json:"runner_requests,omitempty"`
	// SampleRequests is the part of RunnerRequests made while a
	// measurement held the device: the samples' own requests, what a
	// sample costs beyond its kernels.
	SampleRequests []backend.RequestStat `json:"sample_requests,omitempty"`
	// ConfirmTurns counts the checks that held the device's confirmation
	// turn in the pool (a device timing backend with --jobs above 1), and
	// ConfirmTurnSeconds how long they held it together: the
	// confirmations run one after another, so this bounds the pool's
	// rate from below.
	ConfirmTurns       int     `json:"confirm_turns,omitempty"`
	ConfirmTurnSeconds float64 `json:"confirm_turn_seconds,omitempty"`
}

// Retained is a variant the rule retained and its patch.
type Retained struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Patch  string `json:"patch,omitempty"` // relative to Dir; "" when refused
	Note   string `json:"note,omitempty"`  // why the patch was refused
	// Parity says, for a variant judged under a tolerance whose outputs
	// were not bitwise identical, "not bitwise (...)" and by how much.
	Parity string `json:"parity,omitempty"`
	// HostNotes name the host-side values to change with the patch (a
	// tunable parameter that is no #define of the kernel).
	HostNotes []string `json:"host_notes,omitempty"`
	// Point is the tunable-parameter point the variant runs at ("" the
	// spec's default point).
	Point string `json:"point,omitempty"`
}

// ErrControl is returned (wrapped) when the baseline fails its own check:
// no variant can be judged against it.
var ErrControl = errors.New("the baseline fails its own check")

// A ResumeError says why an output directory cannot be used as asked: it
// holds another sweep, or nothing to resume.
type ResumeError struct {
	Dir string
	Msg string
}

func (e *ResumeError) Error() string { return e.Dir + ": " + e.Msg }

type sweep struct {
	opts     Options
	rc       backend.RunnerCounter // the timing backend's counts, or nil
	plan     *Plan
	st       *store.Store
	session  *check.Session
	info     backend.Info // the timing backend's
	vinfo    backend.Info // the verification backend's (info without verification)
	compiler string
	sp       *Space
	insts    map[string]*spec.Instance // checked cases by name
	clock    *clock
	now      func() time.Time

	mu     sync.Mutex
	device float64 // seconds of timed samples recorded under the plan

	// pipe is the pool (Options.Jobs > 1), nil without one; quiet says
	// check's own progress lines are not shown (they come from the pool's
	// goroutines); pmu serialises Options.Progress.
	pipe  *pipeline
	quiet atomic.Bool
	pmu   sync.Mutex

	built     map[string]*variants.Variant // by sha256
	explored  []exploredVariant            // in the order explored
	exploreCt bool                         // the explore control is taken
	stopped   string                       // the budget that ran out
	// checking is the stage check's progress lines belong to, with its
	// count.
	checking              string
	checkDone, checkTotal int
	exploreTotal          int // variants this shard expects to explore; 0 unknown
	// baseOut are the outputs of the baseline's timing programs by case,
	// run once, untimed, to compare each variant's with.
	baseOut map[string]map[string][]byte
	// patchNotes say why a retained variant's patch was refused, by
	// sha256.
	patchNotes map[string]string
	atSpecs    map[string]specAtPoint // the spec at each point
	res        *Result
}

// An exploredVariant is a variant as exploration left it.
type exploredVariant struct {
	v       *variants.Variant
	passed  bool
	timed   bool
	ratio   float64
	explore int // order explored
}

// Run runs the sweep of opts.Plan into opts.Dir: it snapshots the
// baseline and writes the plan, checks the baseline against itself,
// explores the strategy's variants (static threadgroup memory, then
// compile and threadgroup memory, parity on every case, then a few timed
// pairs at the explore case: a variant that fails a stage never reaches
// the next), confirms the fastest few at every case, lets the rule decide,
// writes a verified patch per retained variant, and renders the report.
// Every result goes to the results store as it arrives; with
// Options.Resume, what the store holds is read back, not redone.
//
// When ctx is cancelled, Run stops, renders the report of what finished
// and returns it with an error wrapping ctx's. A variant that fails is a
// result; errors are the sweep's own (a bad directory, a machine that
// cannot run the backend, a cancelled context) or ErrControl.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Plan == nil || opts.Spec == nil || opts.File == nil || opts.Backend == nil || opts.Dir == "" {
		return nil, errors.New("sweep: need a plan, a spec, the kernel, a backend and a directory")
	}
	if err := opts.Plan.Validate(); err != nil {
		return nil, err
	}
	if err := checkVerify(ctx, opts); err != nil {
		return nil, err
	}
	if err := CheckRepo(opts.Plan, opts.Repo); err != nil {
		return nil, err
	}
	if opts.Shard.Count > 1 && !opts.Plan.Search.Shardable() {
		return nil, fmt.Errorf("sweep: the %s strategy chooses each step by the results of the last, so it cannot be split into shards; shard ablate, loo, grid or random", opts.Plan.Search.Strategy)
	}
	if opts.ReadFile == nil {
		opts.ReadFile = inputfile.ReadFile
	}
	w := &sweep{opts: opts, plan: opts.Plan, built: map[string]*variants.Variant{}, now: opts.now, insts: map[string]*spec.Instance{}, checking: "control"}
	if w.now == nil {
		w.now = time.Now
	}
	w.clock = &clock{start: w.now(), wall: opts.Plan.Search.Budget.WallSeconds, device: opts.Plan.Search.Budget.DeviceSeconds, used: w.deviceSeconds}
	hash, err := opts.Plan.Hash()
	if err != nil {
		return nil, err
	}
	w.res = &Result{Dir: opts.Dir, Report: filepath.Join(opts.Dir, "report.md"), Store: filepath.Join(opts.Dir, StoreFile), Plan: hash}
	// The space first: bad operators or refs are refused before anything
	// is written.
	if w.sp, err = NewSpace(opts.File, opts.Plan); err != nil {
		return nil, err
	}
	if err := w.sp.LoadFiles(opts.Plan, false, func(vf VariantFile) ([]byte, error) { return opts.ReadFile(vf.Path) }); err != nil {
		return nil, err
	}
	if err := w.prepareDir(); err != nil {
		return nil, err
	}
	sp, err := opts.Plan.StorePlan()
	if err != nil {
		return nil, err
	}
	w.st, err = store.Open(w.res.Store, sp)
	if err != nil {
		return nil, err
	}
	defer w.st.Close()
	if err := w.loadDevice(ctx); err != nil {
		return nil, err
	}
	if y, ok := opts.Verify.(backend.Yielder); ok && opts.Jobs > 1 && opts.Verify.Name() != opts.Backend.Name() {
		// The pool verifies Jobs variants at once beside the timing on
		// another backend: its compiles and runs yield the cores, so
		// that the samples and confirmations are not starved. (On one
		// backend the samples run on the same runners.)
		y.Yield()
	}
	if pk, ok := opts.Backend.(backend.ProgramKeeper); ok && opts.Jobs > 1 {
		// The programs run again soon: the baseline's stages, the
		// variants the pool confirmed ahead of their timing (up to two
		// per job: a job's next check starts as soon as its last is
		// done), the one being confirmed and the one being timed.
		pk.KeepPrograms(len(opts.Spec.Stages) + 2*opts.Jobs + 2)
	}
	w.info = opts.Backend.Info(ctx)
	w.vinfo = w.info
	if opts.Verify != nil && !opts.Plan.Verify.Off {
		w.vinfo = opts.Verify.Info(ctx)
	}
	w.res.Verified, w.res.Verification = !opts.Plan.Verify.Off, verificationText(opts.Plan, w.vinfo, w.info)
	if c, ok := opts.Backend.(interface{ Compiler() string }); ok {
		w.compiler = c.Compiler()
	}
	if err := w.writeManifest(); err != nil {
		return nil, err
	}
	rc, _ := opts.Backend.(backend.RunnerCounter)
	w.rc = rc
	var starts0 int64
	var took0 time.Duration
	var requests0 []backend.RequestStat
	if rc != nil {
		starts0, took0 = rc.RunnerStarts()
		requests0 = rc.RunnerRequests()
	}
	err = w.run(ctx)
	if w.session != nil {
		w.session.Close()
	}
	if rc != nil {
		n, took := rc.RunnerStarts()
		w.res.RunnerStarts, w.res.RunnerStartSeconds = n-starts0, (took - took0).Seconds()
		w.res.RunnerRequests = backend.RequestsSince(rc.RunnerRequests(), requests0)
	}
	// Whatever happened, the report shows what finished.
	if rerr := w.finish(); rerr != nil && err == nil {
		err = rerr
	}
	return w.res, err
}

// ErrNoVerification is returned (wrapped) for a plan made before
// variants were verified and confirmed apart: it says nothing of how to
// verify them, so its sweep is not run or resumed.
var ErrNoVerification = errors.New("the plan does not say how variants are verified (it was made by an older metalab): start a new sweep; the old one's report still renders with metalab report")

// checkVerify refuses, before any work, a plan whose verification cannot
// run here: none declared, a verification backend not given, or one that
// is not available on this machine (an environment error: exit 3).
func checkVerify(ctx context.Context, opts Options) error {
	v := opts.Plan.Verify
	switch {
	case v == nil:
		return ErrNoVerification
	case v.Off:
		return nil
	case v.Backend != "" && opts.Verify == nil:
		return fmt.Errorf("sweep: the plan verifies on the %s backend, and no verification backend was given", v.Backend)
	case v.Backend == "" && opts.Verify == nil && !opts.Backend.Info(ctx).Check:
		return fmt.Errorf("sweep: the %s backend has no checking mode to verify variants with: name a verification backend (--verify-backend cpu) or turn verification off (--no-verify)", opts.Backend.Name())
	}
	if opts.Verify != nil {
		if ok, why := opts.Verify.Available(ctx); !ok {
			return &backend.EnvError{Op: "verification backend " + opts.Verify.Name() + " is not available", Err: errors.New(why)}
		}
	}
	return nil
}

// verificationText says how the plan's variants are verified and
// confirmed, for the result and the report.
func verificationText(p *Plan, v, t backend.Info) string {
	if p.Verify == nil {
		return "checked on " + p.Backend + " (a sweep from before variants were verified and confirmed apart)"
	}
	confirmed := fmt.Sprintf("confirmed on %s (%s), the timed build, at every timed case", t.Name, t.Device)
	if p.Verify.Off {
		return "not verified (--no-verify): " + confirmed + " only; races, uninitialised reads and bounds were not checked"
	}
	heldOut := ""
	if p.Verify.HeldOut > 0 {
		heldOut = fmt.Sprintf(" and %s drawn for each variant from the spec's domains", pluralize(p.Verify.HeldOut, "held-out case"))
	}
	return fmt.Sprintf("verified on %s (%s) in the checking mode at %s%s; %s", v.Name, v.Device, pluralize(len(p.Checked), "case")+" of "+strings.Join(p.Verify.Sets, ", "), heldOut, confirmed)
}

func (w *sweep) run(ctx context.Context) error {
	if w.opts.Jobs > 1 {
		w.pipe = newPipeline(ctx, w.opts.Jobs, w.opts.PauseDuringSamples, w.info.Name != "cpu", func() *check.Session { return w.session })
		w.pipe.notify = func() { w.progress(Event{Stage: "pipeline"}) }
		w.pipe.onSample = w.opts.onSample
		defer func() {
			w.pipe.close()
			n, held := w.pipe.turnTime()
			w.res.ConfirmTurns, w.res.ConfirmTurnSeconds = n, held.Seconds()
		}()
	}
	if err := w.control(ctx); err != nil {
		return err
	}
	x := &explorer{sp: w.sp, set: w.plan.Search, shard: w.opts.Shard, eval: w.evaluate, budget: w.clock.check, seen: map[string]Outcome{}}
	w.exploreTotal = x.expected()
	if w.pipe != nil {
		w.quiet.Store(true)
		x.hint = func(c candidate) { w.hint(ctx, c) }
		w.ahead(ctx, x)
	}
	if err := x.explore(ctx); err != nil {
		if !isBudget(err) {
			return err
		}
		w.stopped = err.Error()
		w.progress(Event{Stage: "explore", Msg: err.Error()})
	}
	if err := w.confirm(ctx); err != nil {
		if !isBudget(err) {
			return err
		}
		w.stopped = err.Error()
	}
	return w.writePatches(ctx)
}

// prepareDir makes the output directory, or checks that it holds this
// plan's sweep to resume, and writes the plan and the baseline snapshot.
func (w *sweep) prepareDir() error {
	dir := w.opts.Dir
	planJSON, err := w.plan.JSON()
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if w.opts.Resume {
			return &ResumeError{Dir: dir, Msg: "no sweep to resume here"}
		}
	case err != nil:
		return err
	case len(ents) > 0:
		old, err := os.ReadFile(filepath.Join(dir, PlanFile))
		if errors.Is(err, fs.ErrNotExist) {
			return &ResumeError{Dir: dir, Msg: "the directory is not empty and holds no sweep; give a new or empty --out"}
		}
		if err != nil {
			return err
		}
		prev, perr := ParsePlan(old)
		if !w.opts.Resume {
			return &ResumeError{Dir: dir, Msg: "the directory holds a sweep already: continue it with --resume, or give another --out"}
		}
		if perr != nil {
			return &ResumeError{Dir: dir, Msg: fmt.Sprintf("its %s: %v", PlanFile, perr)}
		}
		if prev.Verify == nil {
			return &ResumeError{Dir: dir, Msg: "it holds a sweep whose plan does not say how variants are verified (made by an older metalab); its results are not resumed: give another --out (its report still renders with metalab report)"}
		}
		if d := Diff(prev, w.plan); len(d) > 0 {
			return &ResumeError{Dir: dir, Msg: "it holds the sweep of another plan, which results are never mixed with; the plans differ in " +
				strings.Join(d, "; ") + ". Resume with the flags it was started with (or with --resume alone), or give another --out"}
		}
	default:
		if w.opts.Resume {
			return &ResumeError{Dir: dir, Msg: "no sweep to resume here"}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := ensureReportDir(dir); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, PlanFile), planJSON); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, BaselineDir, filepath.Base(w.plan.Kernel)), w.opts.File.Src)
}

// control records the baseline's own check: compiled, verified,
// confirmed and controlled by check.NewSession (from the store when
// resuming, although the session itself runs again: its reference outputs
// are what variants are compared with).
func (w *sweep) control(ctx context.Context) error {
	w.progress(Event{Stage: "control", Msg: "checking the baseline against itself"})
	start := time.Now()
	defer func() { w.res.CheckSeconds += time.Since(start).Seconds() }()
	var verify backend.Backend
	if !w.plan.Verify.Off {
		verify = w.opts.Verify
	}
	run := w.opts.Backend
	if w.pipe != nil {
		same := verify == run
		run = w.pipe.gate(run, true)
		if same {
			verify = run
		} else {
			verify = w.pipe.gate(verify, false)
		}
	}
	ss, err := check.NewSession(ctx, check.Options{
		Spec: w.opts.Spec, Backend: run, Sets: w.plan.Sets, TGLimit: w.plan.TGLimit,
		Verify: verify, VerifySets: w.plan.Verify.Sets, NoVerify: w.plan.Verify.Off, HeldOut: w.plan.Verify.HeldOut,
		Strict: w.plan.Strict, Race: w.plan.Race, ReadFile: w.opts.ReadFile, Parity: w.plan.ParityOf(),
		Progress: func(msg string) {
			if w.quiet.Load() {
				return
			}
			// The checker names its control run itself ("control: case 1/5").
			msg = strings.TrimPrefix(msg, w.checking+": ")
			w.progress(Event{Stage: w.checking, Done: w.checkDone, Total: w.checkTotal, Msg: msg})
		},
	})
	if err != nil {
		return err
	}
	w.session = ss
	var names []string
	for _, in := range ss.Instances() {
		n := caseName(in)
		if _, dup := w.insts[n]; !dup {
			names = append(names, n)
		}
		w.insts[n] = in
	}
	for _, c := range w.plan.Cases {
		if w.insts[c] == nil {
			return fmt.Errorf("the spec's case %s of the plan is gone (it has %s): the spec changed", c, strings.Join(names, "; "))
		}
	}
	ctl := ss.Control()
	w.addParts(ctl)
	if err := w.record(ctx, w.plan.Baseline, ctl, true); err != nil {
		return err
	}
	w.res.Control = string(ctl.Status)
	w.logf("baseline", "control: %s %s", ctl.Status, ctl.Msg)
	w.res.BaselineFindings = len(ss.BaselineFindings())
	for _, f := range ss.BaselineFindings() {
		w.logf("baseline", "baseline finding (does not stop the sweep): %s", f.Msg)
	}
	if ctl.Status != check.Pass {
		w.res.Control = string(ctl.Status) + ": " + ctl.Msg
		return fmt.Errorf("%w: %s", ErrControl, ctl.Msg)
	}
	return nil
}

// addParts adds the time r's verification and confirmation took.
func (w *sweep) addParts(r *check.Result) {
	w.res.VerifySeconds += r.Verification.Seconds
	w.res.ConfirmSeconds += r.Confirmation.Seconds
}

// vkey is a verification result's key: on the verification backend, or
// with verification off, the build's on the timing backend.
func (w *sweep) vkey(variant, caseName string) store.Key {
	return store.Key{Variant: variant, Backend: w.vinfo.Name, Device: w.vinfo.Device, Case: caseName}
}

// record stores a check result: its build (compile) and its verification
// cases under the verification backend, its confirmation cases under the
// timing backend, keeping what the store holds already.
func (w *sweep) record(ctx context.Context, variant string, r *check.Result, baseline bool) error {
	k := w.vkey(variant, "")
	if _, ok, err := w.st.Compile(ctx, k); err != nil {
		return err
	} else if !ok {
		if err := w.st.PutCompile(ctx, k, compileOf(r, w.plan.TimedStages, baseline)); err != nil {
			return err
		}
		w.taken("compile", k)
	}
	if !w.plan.Verify.Off {
		for _, cr := range r.Verification.Cases {
			ck := w.vkey(variant, cr.Case)
			if ok, err := w.st.HasCheck(ctx, ck); err != nil {
				return err
			} else if ok {
				continue
			}
			if err := w.st.PutCheck(ctx, ck, store.Check{Status: string(cr.Status), Message: parityMessage(cr), Findings: len(cr.Findings)}); err != nil {
				return err
			}
			w.taken("check", ck)
		}
	}
	for _, cr := range r.Confirmation.Cases {
		ck := w.key(variant, cr.Case, "")
		if _, ok, err := w.st.Confirmation(ctx, ck); err != nil {
			return err
		} else if ok {
			continue
		}
		if err := w.st.PutConfirmation(ctx, ck, store.Confirmation{Status: string(cr.Status), Message: parityMessage(cr)}); err != nil {
			return err
		}
		w.taken("confirmation", ck)
	}
	return nil
}

// NotBitwisePrefix starts the stored message of a case that passed
// under a tolerance (Plan.Parity) with outputs that are not bitwise
// identical: "not bitwise (ulp=4): max 3 ulp, ...".
const NotBitwisePrefix = "not bitwise"

// parityMessage is caseMessage, or for a case that passed under a
// tolerance without being bitwise identical, how far it was from it.
func parityMessage(cr check.CaseResult) string {
	if cr.Status == check.Pass && cr.Tolerance != nil && !cr.Tolerance.Bitwise {
		return cr.Tolerance.Text()
	}
	return caseMessage(cr)
}

// caseMessage is a case result in one line: its first difference, its
// message, or its first finding.
func caseMessage(cr check.CaseResult) string {
	msg := cr.Msg
	if cr.Mismatch != nil {
		msg = cr.Mismatch.String()
	}
	if msg == "" && len(cr.Findings) > 0 {
		msg = cr.Findings[0].Msg
	}
	return msg
}

// compileOf is a check result's compile: "ok", or the status of a
// variant that did not get to run (it did not compile, was refused, is
// over the threadgroup memory limit or no longer fits the spec). Its
// threadgroup bytes are the most of the timed stages' (before for the
// baseline).
func compileOf(r *check.Result, timedStages []string, baseline bool) store.Compile {
	c := store.Compile{Status: "ok", TGBytes: -1}
	switch r.Status {
	case check.CompileError, check.Refused, check.FailTGMem, check.FailSpec, check.Unavailable:
		c.Status, c.Message, c.Log = string(r.Status), r.Msg, r.Log
	}
	for _, tg := range r.TGMem {
		if !slices.Contains(timedStages, tg.Entry) {
			continue
		}
		n := int64(tg.After)
		if baseline {
			n = int64(tg.Before)
		}
		c.TGBytes = max(c.TGBytes, n)
	}
	return c
}

// key is a result's key on this sweep's backend and device.
func (w *sweep) key(variant, caseName, phase string) store.Key {
	return store.Key{Variant: variant, Backend: w.info.Name, Device: w.info.Device, Case: caseName, Phase: phase}
}

// evaluate checks and explores one candidate: cheap before dear, each
// stage only for a variant that passed the last.
func (w *sweep) evaluate(ctx context.Context, c candidate) (Outcome, error) {
	v := c.v
	w.built[v.Sha256] = v
	w.res.Variants++
	n := len(w.explored) + 1
	total := max(w.exploreTotal, n)
	w.checking, w.checkDone, w.checkTotal = "explore", n-1, total
	what := w.sp.describe(c.atoms)
	var refs []string
	for _, r := range v.Refs {
		refs = append(refs, r.String())
	}
	if c.file != nil {
		what = "hand-written " + c.file.File.Path
		if c.file.File.OutsideFn != "" {
			what += " (changes code outside " + strings.Join(w.plan.Functions, ", ") + ": " + c.file.File.OutsideFn + ")"
		}
		refs = []string{c.file.File.Ref()}
	}
	if len(c.point) > 0 {
		if c.file == nil && len(c.atoms) == 0 {
			what = "the baseline's source"
		}
		what += " at " + c.point.String()
		refs = append(refs, PointRefPrefix+c.point.String())
	}
	w.progress(Event{Stage: "explore", Done: n - 1, Total: total, Variant: v.Name, Msg: "checking " + what})
	if err := w.st.PutVariant(ctx, store.Variant{SHA256: v.Sha256, Name: v.Name, Refs: refs}); err != nil {
		return Outcome{}, err
	}
	if err := writeFile(filepath.Join(w.opts.Dir, VariantsDir, fileName(v.Name)+filepath.Ext(w.plan.Kernel)), v.Source); err != nil {
		return Outcome{}, err
	}
	ev := exploredVariant{v: v, explore: n}
	defer func() { w.explored = append(w.explored, ev) }()
	w.logf(v.Name, "variant %s sha256 %s: %s", v.Name, v.Sha256, what)
	vd, err := w.check(ctx, v)
	if err != nil {
		return Outcome{}, err
	}
	ev.passed = vd.passed()
	if !vd.passed() {
		msg := "failed its " + vd.stopped
		if ProofClaimed(refs) && ProofViolation(vd.status) {
			w.res.ProofViolated++
			msg = "proof violated (a metalab bug): " + msg
			w.logf(v.Name, "%s", proofMessage(refs, vd))
		} else {
			w.res.Failed++
		}
		w.progress(Event{Stage: "explore", Done: n, Total: total, Variant: v.Name, Msg: msg})
		return Outcome{Passed: false}, nil
	}
	if err := w.exploreControl(ctx); err != nil {
		return Outcome{}, err
	}
	cv := w.checkVariant(v)
	in := w.insts[w.plan.Explore.Case]
	t, err := w.measureKey(ctx, w.key(v.Sha256, w.plan.Explore.Case, PhaseExplore), cv, in, w.plan.Explore)
	var te *timingError
	if errors.As(err, &te) {
		w.logf(v.Name, "explore: not timed: %v", te)
		if te.after {
			ev.passed = false
			w.res.FailedAfterTiming++
			w.progress(Event{Stage: "explore", Done: n, Total: total, Variant: v.Name, Msg: "failed after timing"})
			return Outcome{Passed: false}, nil
		}
		return Outcome{Passed: true}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	ev.timed, ev.ratio = true, t.Stats.Ratio
	w.res.Explored++
	w.progress(Event{Stage: "explore", Done: n, Total: total, Variant: v.Name, Msg: fmt.Sprintf("explored: %s at %s", report.GainText(t.Stats.Ratio), w.plan.Explore.Case)})
	return Outcome{Passed: true, Timed: true, Ratio: t.Stats.Ratio}, nil
}

// checkVariant is v as check judges it: at its point, under the spec at
// that point.
func (w *sweep) checkVariant(v *variants.Variant) *check.Variant {
	cv := &check.Variant{Name: v.Name, Path: filepath.Join(VariantsDir, fileName(v.Name)+filepath.Ext(w.plan.Kernel)), Text: v.Source, Edits: v.Edits}
	if pt := w.sp.PointOf(v.Sha256); len(pt) > 0 {
		cv.Spec, _ = w.specAt(pt)
	}
	return cv
}

// specAt returns the spec at point pt, made once per point.
func (w *sweep) specAt(pt spec.Point) (*spec.Spec, error) {
	key := pt.String()
	if e, ok := w.atSpecs[key]; ok {
		return e.s, e.err
	}
	s, err := w.opts.Spec.At(pt)
	if w.atSpecs == nil {
		w.atSpecs = map[string]specAtPoint{}
	}
	w.atSpecs[key] = specAtPoint{s, err}
	return s, err
}

type specAtPoint struct {
	s   *spec.Spec
	err error
}

// A verdict is where a variant's checks stopped: at its build, its
// verification or its confirmation, with the status and message of the
// failure; stopped is "" when it passed them all.
type verdict struct {
	stopped string // check.PartBuild, check.PartVerification, check.PartConfirmation or ""
	status  string
	msg     string
}

func (v verdict) passed() bool { return v.stopped == "" }

// check builds, verifies and confirms v unless the store holds its
// results, and says where it stopped.
func (w *sweep) check(ctx context.Context, v *variants.Variant) (verdict, error) {
	vd, complete, err := w.stored(ctx, v.Sha256)
	if err != nil || complete {
		return vd, err
	}
	k := w.vkey(v.Sha256, "")
	if _, have, err := w.st.Compile(ctx, k); err != nil {
		return verdict{}, err
	} else if !have {
		if pt := w.sp.PointOf(v.Sha256); len(pt) > 0 {
			if _, err := w.specAt(pt); err != nil {
				msg := fmt.Sprintf("the spec at %s: %v", pt, err)
				if err := w.st.PutCompile(ctx, k, store.Compile{Status: string(check.FailSpec), Message: msg, TGBytes: -1}); err != nil {
					return verdict{}, err
				}
				w.taken("compile", k)
				w.logf(v.Name, "not compiled: %s", msg)
				return verdict{stopped: check.PartBuild, status: string(check.FailSpec), msg: msg}, nil
			}
		}
		if msg := w.sourceOverLimit(v); msg != "" {
			// Static threadgroup memory, from the source, before compiling.
			if err := w.st.PutCompile(ctx, k, store.Compile{Status: string(check.FailTGMem), Message: msg, TGBytes: -1}); err != nil {
				return verdict{}, err
			}
			w.taken("compile", k)
			w.logf(v.Name, "not compiled: %s", msg)
			return verdict{stopped: check.PartBuild, status: string(check.FailTGMem), msg: msg}, nil
		}
	}
	if err := w.budgetCheck(); err != nil {
		return verdict{}, err
	}
	w.taken("checking", k)
	start := time.Now()
	var r *check.Result
	if w.pipe != nil {
		r, err = w.pipe.result(ctx, v.Sha256, *w.checkVariant(v))
	} else {
		r, err = w.session.Check(ctx, *w.checkVariant(v))
	}
	if err != nil {
		return verdict{}, err
	}
	if w.pipe != nil {
		w.res.CheckSeconds += r.Seconds
	} else {
		w.res.CheckSeconds += time.Since(start).Seconds()
	}
	w.addParts(r)
	if err := w.record(ctx, v.Sha256, r, false); err != nil {
		return verdict{}, err
	}
	line := fmt.Sprintf("check: %s", r.Status)
	if r.Msg != "" {
		line += ": " + r.Msg
	}
	w.logf(v.Name, "%s (%.1fs)", line, r.Seconds)
	for _, p := range []struct {
		name string
		part *check.Part
	}{{"verification", &r.Verification}, {"confirmation", &r.Confirmation}} {
		w.logf(v.Name, "  %s on %s (%s build): %s %s (%.1fs)", p.name, dash(p.part.Backend), dash(p.part.Build), p.part.Status, p.part.Msg, p.part.Seconds)
		for _, cr := range p.part.Cases {
			w.logf(v.Name, "    %s: %s %s", cr.Case, cr.Status, caseMessage(cr))
		}
	}
	if r.Log != "" {
		w.logf(v.Name, "log:\n%s", r.Log)
	}
	vd, complete, err = w.stored(ctx, v.Sha256)
	switch {
	case err != nil:
		return verdict{}, err
	case complete:
		return vd, nil
	case r.Status == check.Pass:
		return verdict{}, fmt.Errorf("variant %s: check passed it without a result for every verification and timed case", v.Name)
	}
	stopped := r.Stopped
	if stopped == "" {
		stopped = check.PartVerification
	}
	return verdict{stopped: stopped, status: string(r.Status), msg: r.Msg}, nil
}

// stored reads variant's verdict from the store: complete when it failed
// a recorded step, or passed its build, every verification case and every
// timed case's confirmation.
func (w *sweep) stored(ctx context.Context, variant string) (verdict, bool, error) {
	comp, ok, err := w.st.Compile(ctx, w.vkey(variant, ""))
	if err != nil || !ok {
		return verdict{}, false, err
	}
	if comp.Status != "ok" {
		return verdict{stopped: check.PartBuild, status: comp.Status, msg: comp.Message}, true, nil
	}
	complete := true
	if !w.plan.Verify.Off {
		for _, c := range w.plan.Checked {
			r, ok, err := w.st.Check(ctx, w.vkey(variant, c))
			if err != nil {
				return verdict{}, false, err
			}
			if ok && r.Status != string(check.Pass) {
				return verdict{stopped: check.PartVerification, status: r.Status, msg: c + ": " + r.Message}, true, nil
			}
			complete = complete && ok
		}
		if w.plan.Verify.HeldOut > 0 {
			// A held-out case that failed stands: a resumed sweep does not
			// draw again until a variant passes.
			rows, err := w.st.Results(ctx, store.Query{Stage: store.StageCheck, Variant: variant, Backend: w.vinfo.Name, Device: w.vinfo.Device})
			if err != nil {
				return verdict{}, false, err
			}
			for _, r := range rows {
				_, name, _ := strings.Cut(r.Case, "/")
				if strings.HasPrefix(name, "heldout") && !slices.Contains(w.plan.Checked, r.Case) && r.Status != string(check.Pass) {
					msg := "held-out case " + r.Case
					if r.Check != nil {
						msg += ": " + r.Check.Message
					}
					return verdict{stopped: check.PartVerification, status: r.Status, msg: msg}, true, nil
				}
			}
		}
	}
	for _, c := range w.plan.Cases {
		r, ok, err := w.st.Confirmation(ctx, w.key(variant, c, ""))
		if err != nil {
			return verdict{}, false, err
		}
		if ok && r.Status != string(check.Pass) {
			return verdict{stopped: check.PartConfirmation, status: r.Status, msg: c + ": " + r.Message}, true, nil
		}
		complete = complete && ok
	}
	return verdict{}, complete, nil
}

// sourceOverLimit returns why v is over the threadgroup memory limit by
// its source, at its point (its stages' defines), or "" when it is not or
// the size is not known.
func (w *sweep) sourceOverLimit(v *variants.Variant) string {
	f, err := msl.Parse(w.plan.Kernel, v.Source)
	if err != nil {
		return ""
	}
	cv := w.checkVariant(v)
	seen := map[string]bool{}
	for _, in := range w.insts {
		if cv.Spec != nil {
			pin, err := w.session.Instance(cv, in)
			if err != nil {
				continue
			}
			in = pin
		}
		for _, st := range in.Stages {
			key := st.Entry + fmt.Sprint(st.Defines)
			if st.Source != w.plan.Kernel || seen[key] {
				continue
			}
			seen[key] = true
			m, err := msl.ThreadgroupMemory(f, st.Entry, msl.Env{File: f, Defines: st.Defines})
			if err == nil && m.Known && m.Total > int64(w.plan.TGLimit) {
				at := ""
				if pt := w.sp.PointOf(v.Sha256); len(pt) > 0 {
					at = " at " + pt.String()
				}
				return fmt.Sprintf("%s: %d bytes of static threadgroup memory by its source%s, limit %d", st.Entry, m.Total, at, w.plan.TGLimit)
			}
		}
	}
	return ""
}

// exploreControl times the baseline against itself at the explore case,
// once, before the first variant is explored.
func (w *sweep) exploreControl(ctx context.Context) error {
	if w.exploreCt {
		return nil
	}
	w.progress(Event{Stage: "explore", Msg: "timing the baseline against itself at " + w.plan.Explore.Case})
	_, err := w.measureKey(ctx, w.key(w.plan.Baseline, w.plan.Explore.Case, PhaseExplore), nil, w.insts[w.plan.Explore.Case], w.plan.Explore)
	if err != nil {
		return err
	}
	w.exploreCt = true
	return nil
}

// budgetCheck returns the time budget that ran out, or nil.
func (w *sweep) budgetCheck() error { return w.clock.check() }

// loadDevice sums the timed samples the store holds for the plan.
func (w *sweep) loadDevice(ctx context.Context) error {
	rows, err := w.st.Results(ctx, store.Query{Stage: store.StageSample})
	if err != nil {
		return err
	}
	var ns int64
	for _, r := range rows {
		ns += r.Sample.NS
	}
	w.device = float64(ns) / 1e9
	return nil
}

func (w *sweep) addDevice(d time.Duration) {
	w.mu.Lock()
	w.device += d.Seconds()
	w.mu.Unlock()
}

// addTime adds the time since t0 to *sum, one of w.res's.
func (w *sweep) addTime(sum *float64, t0 time.Time) {
	w.mu.Lock()
	*sum += time.Since(t0).Seconds()
	w.mu.Unlock()
}

func (w *sweep) deviceSeconds() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.device
}

func (w *sweep) progress(e Event) {
	if w.opts.Progress == nil {
		return
	}
	if w.pipe != nil {
		s := w.pipe.snapshot()
		e.Pipeline = &s
	}
	w.pmu.Lock()
	defer w.pmu.Unlock()
	w.opts.Progress(e)
}

func (w *sweep) taken(stage string, k store.Key) {
	if w.opts.onResult != nil {
		w.opts.onResult(stage, k)
	}
}

// logf appends a line to the variant's log, logs/<variant>.log.
func (w *sweep) logf(variant, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if w.opts.Log != nil {
		w.opts.Log(variant, line)
	}
	path := filepath.Join(w.opts.Dir, LogsDir, fileName(variant)+".log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", w.now().UTC().Format(time.RFC3339), strings.TrimRight(line, "\n"))
}

// A selected variant is one the confirm phase times.
type selected struct {
	v     *variants.Variant
	ratio float64
}

// confirm times the fastest explored variants at every case, and the
// confirmations, and lets the rule decide each: a variant the rule already
// rejects (too slow at the target, slower elsewhere) is not timed further.
func (w *sweep) confirm(ctx context.Context) error {
	var cands []selected
	for _, e := range w.explored {
		if e.passed && e.timed && e.ratio < 1 {
			cands = append(cands, selected{e.v, e.ratio})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].ratio < cands[j].ratio })
	cands = cands[:min(len(cands), w.plan.Confirm.Top)]
	w.res.Confirmed = len(cands)
	if len(cands) == 0 {
		return nil
	}
	rule := w.plan.Rule
	target := w.insts[w.plan.Target]
	var before, after *timed
	var err error
	if rule.Control {
		w.progress(Event{Stage: "confirm", Total: len(cands), Msg: "timing the baseline against itself at " + w.plan.Target})
		if before, err = w.measureKey(ctx, w.key(w.plan.Baseline, w.plan.Target, PhaseBefore), nil, target, w.plan.Confirm); err != nil {
			return err
		}
	}
	var open []*evidence
	for i, c := range cands {
		w.progress(Event{Stage: "confirm", Done: i, Total: len(cands), Variant: c.v.Name, Msg: "confirming"})
		ev, err := w.confirmOne(ctx, c.v, resultOf(before))
		if err != nil {
			return err
		}
		if ev != nil {
			open = append(open, ev)
		}
		w.progress(Event{Stage: "confirm", Done: i + 1, Total: len(cands), Variant: c.v.Name, Msg: "confirmed"})
	}
	if len(open) == 0 {
		return nil
	}
	if rule.Control {
		if after, err = w.measureKey(ctx, w.key(w.plan.Baseline, w.plan.Target, PhaseAfter), nil, target, w.plan.Confirm); err != nil {
			return err
		}
	}
	for _, ev := range open {
		ev.d.After = resultOf(after)
		if err := w.decide(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// evidence is what the rule is given for one variant.
type evidence struct {
	v *variants.Variant
	d measure.Decision
}

// confirmOne times v at the target, then the other cases, then the
// confirmations, deciding as soon as the evidence so far settles that v
// cannot be retained: the rule rejects it, or some evidence is unusable
// (contaminated in every attempt, or the control before is), which no
// further measurement can mend. It returns the evidence still waiting for
// the control after, or nil when v is decided.
func (w *sweep) confirmOne(ctx context.Context, v *variants.Variant, before *measure.Result) (*evidence, error) {
	dk := w.key(v.Sha256, "", PhaseDecide)
	if _, ok, err := w.st.Decision(ctx, dk); err != nil || ok {
		return nil, err
	}
	cv := w.checkVariant(v)
	ev := &evidence{v: v, d: measure.Decision{Bitwise: true, Target: measure.Case{Name: w.plan.Target}, Before: before}}
	at := func(c, phase string) (*timed, error) {
		return w.measureKey(ctx, w.key(v.Sha256, c, phase), cv, w.insts[c], w.plan.Confirm)
	}
	t, err := at(w.plan.Target, PhaseConfirm)
	if err != nil {
		return nil, w.notTimed(ctx, ev, err)
	}
	ev.d.Target.Result = t.Result
	if rejected, err := w.early(ctx, ev); rejected || err != nil {
		return nil, err
	}
	for _, c := range w.plan.Cases {
		if c == w.plan.Target {
			continue
		}
		t, err := at(c, PhaseConfirm)
		if err != nil {
			return nil, w.notTimed(ctx, ev, err)
		}
		ev.d.Others = append(ev.d.Others, measure.Case{Name: c, Result: t.Result})
		if rejected, err := w.early(ctx, ev); rejected || err != nil {
			return nil, err
		}
	}
	for i := 1; i <= w.plan.Rule.Confirmations; i++ {
		t, err := at(w.plan.Target, confirmPhase(i))
		if err != nil {
			return nil, w.notTimed(ctx, ev, err)
		}
		ev.d.Confirmations = append(ev.d.Confirmations, t.Result)
		if rejected, err := w.early(ctx, ev); rejected || err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// notTimed passes err on, unless it is a variant that does not run when
// timed: then the rule rejects it on the evidence so far (its clause
// missing) and the sweep goes on.
func (w *sweep) notTimed(ctx context.Context, ev *evidence, err error) error {
	var te *timingError
	if !errors.As(err, &te) {
		return err
	}
	w.logf(ev.v.Name, "confirm: not timed: %v", te)
	if te.after {
		w.res.FailedAfterTiming++
		w.progress(Event{Stage: "confirm", Variant: ev.v.Name, Msg: "failed after timing: " + te.Error()})
	}
	ev.d.Bitwise = false
	return w.decide(ctx, ev)
}

// early decides ev when the evidence so far settles it: rejected, or
// inconclusive (unusable evidence stays unusable). Missing evidence alone
// (the cases still to time, the control after) does not.
func (w *sweep) early(ctx context.Context, ev *evidence) (bool, error) {
	switch w.plan.Rule.Decide(ev.d).Outcome {
	case measure.Reject, measure.Inconclusive:
		return true, w.decide(ctx, ev)
	}
	return false, nil
}

// decide records the rule's verdict on ev.
func (w *sweep) decide(ctx context.Context, ev *evidence) error {
	v := w.plan.Rule.Decide(ev.d)
	var reasons []string
	want := map[measure.Outcome]measure.Status{measure.Reject: measure.Fail, measure.Inconclusive: measure.Unusable, measure.Pending: measure.Missing, measure.Retain: measure.Pass}[v.Outcome]
	for _, c := range v.Clauses {
		if c.Status == want {
			reasons = append(reasons, c.Name+": "+c.Why)
		}
	}
	detail, err := jsonOf(v)
	if err != nil {
		return err
	}
	k := w.key(ev.v.Sha256, "", PhaseDecide)
	if err := w.st.PutDecision(ctx, k, store.Decision{Verdict: string(v.Outcome), Reasons: reasons, Rule: w.plan.RuleSHA256, Detail: detail}); err != nil {
		return err
	}
	w.taken("decision", k)
	w.logf(ev.v.Name, "decision: %s", v.String())
	w.progress(Event{Stage: "decide", Variant: ev.v.Name, Msg: string(v.Outcome)})
	return nil
}

func resultOf(t *timed) *measure.Result {
	if t == nil {
		return nil
	}
	return t.Result
}

// writePatches writes a verified patch for every retained variant.
func (w *sweep) writePatches(ctx context.Context) error {
	rows, err := w.st.Results(ctx, store.Query{Stage: store.StageDecision, Status: string(measure.Retain)})
	if err != nil {
		return err
	}
	for _, r := range rows {
		v := w.built[r.Variant]
		if v == nil {
			if v, err = w.rebuild(r.Refs); err != nil {
				return err
			}
		}
		header, err := PatchHeader(ctx, w.st, w.plan, r.Variant)
		if err != nil {
			return err
		}
		po := PatchOptions{Repo: w.opts.Repo, Header: header}
		if pt := w.sp.PointOf(v.Sha256); len(pt) > 0 {
			in := w.insts[w.plan.Target]
			pin, err := w.session.Instance(w.checkVariant(v), in)
			if err != nil {
				pin = nil
			}
			ch, err := changeAt(w.opts.Spec, in, pin, v.Source, pt, w.plan.Kernel)
			if err != nil {
				w.logf(v.Name, "patch refused: %v", err)
				continue
			}
			po.Defines, po.Host = ch.edits, ch.host
		}
		if _, _, err := WritePatch(ctx, w.opts.Dir, w.plan, w.opts.File, v, po); err != nil {
			w.logf(v.Name, "patch refused: %v", err)
			if w.patchNotes == nil {
				w.patchNotes = map[string]string{}
			}
			w.patchNotes[v.Sha256] = err.Error()
		}
	}
	return nil
}

// rebuild builds the variant of stored refs.
func (w *sweep) rebuild(refs []string) (*variants.Variant, error) {
	return RebuildVariant(w.sp, refs)
}

// RebuildVariant builds the variant of refs (as the store records them)
// in sp: a hand-written variant's is its file (Space.LoadFiles).
func RebuildVariant(sp *Space, refs []string) (*variants.Variant, error) {
	rest, pt, err := splitPointRef(refs)
	if err != nil {
		return nil, err
	}
	if len(pt) > 0 {
		if len(rest) == 0 {
			return sp.atPoint(sp.baseVariant(), pt), nil
		}
		v, err := RebuildVariant(sp, rest)
		if err != nil {
			return nil, err
		}
		return sp.atPoint(v, pt), nil
	}
	if len(refs) == 1 && IsFileRef(refs[0]) {
		if hw := sp.fileOf(refs[0]); hw != nil {
			return hw.Variant, nil
		}
		return nil, fmt.Errorf("%s is not a hand-written variant of the plan", refs[0])
	}
	var atoms []int
	for _, r := range refs {
		i := sp.index(r)
		if i < 0 {
			return nil, fmt.Errorf("ref %s is not an atom of the plan's space: the kernel or the operators changed", r)
		}
		atoms = append(atoms, i)
	}
	return sp.Build(atoms)
}

// PatchOptions say how WritePatch verifies and labels a patch.
type PatchOptions struct {
	// Repo, when set, is the repository the patch is verified against.
	Repo string
	// Header are lines written before the diff, each as "# " and the
	// line (git apply skips text before a diff): a variant judged under
	// a tolerance says there that it is not bitwise, and by how much.
	Header []string
	// Defines are edits of v's source (a point's #defines) the patch
	// makes too, and Host the host-side values to change with it,
	// written beside the patch (patches/NAME.host.txt) and in its header.
	Defines []edit.Edit
	Host    []string
}

// PatchHeader returns the header lines of variant's patch: how it was
// not bitwise identical under the plan's tolerance, if it was not.
func PatchHeader(ctx context.Context, st *store.Store, p *Plan, variant string) ([]string, error) {
	if p.Parity == "" {
		return nil, nil
	}
	for _, stage := range []store.Stage{store.StageCheck, store.StageConfirm} {
		rows, err := st.Results(ctx, store.Query{Stage: stage, Variant: variant})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			msg := ""
			if r.Check != nil {
				msg = r.Check.Message
			} else if r.Confirm != nil {
				msg = r.Confirm.Message
			}
			if strings.HasPrefix(msg, NotBitwisePrefix) {
				return []string{"metalab: this change is NOT BITWISE identical to the baseline; it passed under --parity " + p.Parity + " (" + r.Case + ": " + msg + ")"}, nil
			}
		}
	}
	return nil, nil
}

// WritePatch writes the patch of v against the plan's baseline into
// dir/patches, verified (against o.Repo when given, which must still hold
// the baseline at the plan's path), and returns its path relative to dir.
// An existing patch with the same text is kept.
func WritePatch(ctx context.Context, dir string, p *Plan, base *msl.File, v *variants.Variant, o PatchOptions) (string, *patches.Patch, error) {
	repo := o.Repo
	fns := p.Functions
	if p.Search.Scope == "file" {
		// --scope file: the patch may change the kernel's file anywhere.
		fns = nil
	}
	outside := func(err error) error {
		if err != nil && p.Search.Scope != "file" && strings.Contains(err.Error(), "change outside") {
			return fmt.Errorf("%w (the variant changes code outside --fn: sweep with --scope file to allow such a patch)", err)
		}
		return err
	}
	src := v.Source
	if len(o.Defines) > 0 {
		// A point's #defines lie outside --fn by nature: the variant's own
		// edits are held to the scope, then the #defines are added.
		if fns != nil {
			if err := patches.CheckFuncScope(base.Src, v.Source, base, fns); err != nil {
				return "", nil, outside(fmt.Errorf("refusing patch: %w", err))
			}
		}
		var err error
		if src, err = edit.Apply(v.Source, o.Defines); err != nil {
			return "", nil, fmt.Errorf("the #define edits of %s: %w", v.Name, err)
		}
		fns = nil
	}
	if len(o.Host) > 0 {
		if err := writeFile(filepath.Join(dir, hostFile(v.Name)), []byte(strings.Join(o.Host, "\n")+"\n")); err != nil {
			return "", nil, err
		}
	}
	pt, err := patches.Make(ctx, base.Src, src, patches.MakeOptions{Path: p.Path, File: base, Fns: fns, Repo: repo})
	if err = outside(err); err != nil {
		return "", nil, err
	}
	if pt.Text == "" {
		// Nothing changes in the source: the host-side notes are the
		// whole change.
		return "", pt, nil
	}
	rel := filepath.Join(PatchesDir, fileName(v.Name)+".patch")
	text := pt.Text
	var b strings.Builder
	for _, h := range o.Header {
		b.WriteString("# " + h + "\n")
	}
	for _, h := range o.Host {
		b.WriteString("# host side: " + h + "\n")
	}
	text = b.String() + text
	if err := writeFile(filepath.Join(dir, rel), []byte(text)); err != nil {
		return "", nil, err
	}
	return rel, pt, nil
}
