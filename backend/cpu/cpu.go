// Package cpu is the backend that runs Metal kernels on the host CPU.
//
// A kernel is translated to C++ (package translate with its C++ target,
// translate/cpp: the source after the compiler's own preprocessor, only
// what the entry point reaches) against the metal_stdlib prelude (package
// prelude), compiled into a shared object with the system C++ compiler
// and run by the runner: a child process, built once from the
// sources in runtime/, that executes each threadgroup's threads as
// cooperative fibers. Every compiled program has a runner process of its
// own, which loads only that program's kernel object: nothing one kernel
// does (a patched checking hook, corrupted runner state) can reach another
// kernel's results. Faults in a kernel kill only its runner; they come back
// as *backend.Failure values and the runner is restarted.
//
// The runner, the installed headers and every compiled kernel are cached by
// content hash in one directory: Options.CacheDir, else $METALAB_CACHE, else
// <user cache dir>/metalab (~/.cache/metalab on Linux). Concurrent metalab
// processes may share it: every file appears by an atomic rename. It is never
// pruned, but deleting it at any time is safe (`metalab backends` shows where
// it is and its size); temporaries left by killed compiles are removed once
// they are an hour old.
package cpu

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"metalab/backend"
	"metalab/backend/cpu/prelude"
	"metalab/backend/internal/buildcache"
	"metalab/backend/runner"
	"metalab/translate"
	"metalab/translate/cpp"
)

// A TranslateFunc turns a Metal source into one self-contained C++ TU
// exporting mtl_kernels (it includes nothing but the prelude: the source's
// headers and defines are already applied) and the name of src.Entry's
// entry in that table. pp runs the backend's compiler's preprocessor.
type TranslateFunc func(ctx context.Context, src backend.Source, pp *translate.Preprocessor) (tu []byte, kernel string, err error)

// Options configure a Backend. Zero values select the defaults.
type Options struct {
	CacheDir string // runner, headers and compiled kernels; default $METALAB_CACHE or <user cache dir>/metalab
	CXX      string // C++ compiler command; default $CXX or "g++"
	Workers  int    // runner worker threads; default one per core

	// MemoryLimit bounds the runner's private memory (RLIMIT_DATA) in
	// bytes; 0 means three quarters of the machine's memory where known.
	MemoryLimit int64
	// CPULimit bounds the runner's CPU time (RLIMIT_CPU) in seconds; 0
	// means DefaultCPULimit. A runner that reaches it is restarted.
	CPULimit int64
	// NoSandbox runs the runner without its system-call filter, Landlock
	// and resource limits, and the compiler outside its sandbox (for
	// debugging the runner itself).
	NoSandbox bool
	// CompileTimeout bounds each compiler run (and the preprocessor's);
	// 0 means 120 s. SetCompileTimeout overrides it.
	CompileTimeout time.Duration

	// Translate turns sources into C++; default DefaultTranslate.
	Translate TranslateFunc
	// Prelude holds the metal_stdlib headers and PreludeVersion names them
	// (for the compile cache); default package prelude's FS and Version.
	Prelude        fs.FS
	PreludeVersion string
}

// DefaultTranslate is the translator Backends use when Options.Translate
// is unset: package translate with the C++ target (package
// translate/cpp).
var DefaultTranslate TranslateFunc = func(ctx context.Context, src backend.Source, pp *translate.Preprocessor) ([]byte, string, error) {
	u, err := translate.Translate(ctx, src, translate.Options{Target: cpp.Target, Preprocessor: pp})
	if err != nil {
		return nil, "", err
	}
	return u.Text, u.Entry, nil
}

// A Backend compiles and runs kernels on the CPU. Each program runs in a
// runner process of its own (at most maxLiveRunners are kept running: the
// least recently used program's runner is stopped and started again when
// it next runs); one started runner is kept spare so that a new program
// does not wait for one. Requests to runners are serialised, so runs of
// different programs do not disturb each other's timings.
type Backend struct {
	opts Options
	cxx  []string
	root string
	pp   *translate.Preprocessor // the compiler's preprocessor, for translation

	setupOnce       sync.Once
	setupErr        error
	id              string // compiler identity
	excessPrecision bool
	incs            []string
	runnerPath      string

	compilerRuns   atomic.Int64            // kernel compiler invocations, for tests
	compileTimeout buildcache.CompileLimit // SetCompileTimeout's, else Options'
	runnerDefines  []string                // extra runner build flags, for tests (e.g. the portable fibers)
	runnerWrap     []string                // command the runner is started under, for tests (e.g. an emulator)

	// runMu is held for reading by every program's requests (with the
	// program's own lock: programs run at once, each in its own runner, so
	// a pool of checks verifies in parallel) and for writing by Close.
	runMu  sync.RWMutex
	pool   *runner.Pool             // a runner process per program, and a spare
	starts atomic.Int64             // runner processes started, for tests
	nice   atomic.Pointer[[]string] // the command prefix of Yield, or nil

	linesState

	pchMu    [2]sync.Mutex // guards pchState, by mode
	pchState [2]pchState   // precompiled prelude, plain and checking mode
	pchBuilt atomic.Int64  // precompiled-prelude builds, for tests
	noPCH    bool          // compile without the precompiled prelude (benchmarks, tests)

	// modeFreeTranslate says the translator is DefaultTranslate, whose
	// TU does not depend on Source.Check: CompileBoth translates once.
	modeFreeTranslate bool
}

// DefaultCPULimit is the runner's CPU-time limit when Options.CPULimit is
// 0: far beyond any run's timeout, a backstop for a runner whose metalab
// could not stop it.
const DefaultCPULimit = 6 * 3600

var (
	_ backend.Backend        = (*Backend)(nil)
	_ backend.CompileLimiter = (*Backend)(nil)
	_ backend.BothCompiler   = (*Backend)(nil)
)

// New returns a cpu Backend. Nothing is built until first use.
func New(opts Options) *Backend {
	if opts.CXX == "" {
		opts.CXX = os.Getenv("CXX")
	}
	if opts.CXX == "" {
		opts.CXX = "g++"
	}
	modeFree := opts.Translate == nil
	if modeFree {
		opts.Translate = DefaultTranslate
	}
	if opts.Prelude == nil {
		opts.Prelude = prelude.FS
		if opts.PreludeVersion == "" {
			opts.PreludeVersion = prelude.Version
		}
	}
	cxx := strings.Fields(opts.CXX)
	b := &Backend{opts: opts, cxx: cxx, pp: &translate.Preprocessor{CXX: cxx}, modeFreeTranslate: modeFree}
	b.pool = &runner.Pool{Max: maxLiveRunners(), Start: b.startRunner, Spare: true, Background: true}
	return b
}

// RunnerStarts is the runner processes the backend started and their
// starts' wall time summed (backend.RunnerCounter).
func (b *Backend) RunnerStarts() (int64, time.Duration) { return b.pool.Starts(), b.pool.StartTime() }

// RunnerRequests is what the runners' requests cost so far, by type
// (backend.RunnerCounter).
func (b *Backend) RunnerRequests() []backend.RequestStat { return b.pool.Requests() }

var _ backend.RunnerCounter = (*Backend)(nil)

// Name returns "cpu".
func (b *Backend) Name() string { return "cpu" }

// noCompiler is the reason given when no C++ compiler is found.
const noCompiler = "no C++ compiler: install g++ (Debian/Ubuntu: apt-get install -y g++) or set CXX"

// setup finds the compiler, builds the runner and installs the headers,
// once.
func (b *Backend) setup(ctx context.Context) error {
	b.setupOnce.Do(func() { b.setupErr = b.doSetup(ctx) })
	return b.setupErr
}

func (b *Backend) doSetup(ctx context.Context) error {
	if len(b.cxx) == 0 {
		return errors.New(noCompiler)
	}
	if _, err := exec.LookPath(b.cxx[0]); err != nil {
		return errors.New(noCompiler)
	}
	root, err := buildcache.Root(b.opts.CacheDir)
	if err != nil {
		return err
	}
	b.root = root
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("create cache dir: %w", err)
	}
	cleanStale(root, time.Now())
	id, err := compilerID(ctx, b.cxx)
	if err != nil {
		return fmt.Errorf("%s: %w", noCompiler, err)
	}
	b.id = id
	b.runnerPath, err = b.buildRunner(ctx)
	if err != nil {
		return fmt.Errorf("cannot build the cpu runner with %s (needs C++17): %w", b.cxx[0], err)
	}
	b.incs, err = b.installHeaders()
	if err != nil {
		return err
	}
	// The preprocessor runs in the compile sandbox too: it reads the
	// source's include roots (its -iquote and -I directories) and the
	// toolchain, nothing else.
	b.pp = &translate.Preprocessor{CXX: append(b.sandboxPrefix(b.compileTimeoutValue()), b.cxx...)}
	probeDir, err := os.MkdirTemp(root, ".probe-")
	if err == nil {
		b.excessPrecision = probeFlag(ctx, b.cxx, probeDir, "-fexcess-precision=standard")
		os.RemoveAll(probeDir)
	}
	return nil
}

// Compiler names the C++ compiler the kernels are built with (its
// --version line), for provenance; "" when none was found.
func (b *Backend) Compiler() string {
	if b.setupErr != nil {
		return ""
	}
	return b.id
}

// Describe names the compiler and cache the backend uses; it is meant for
// `metalab backends` after Available returned true.
func (b *Backend) Describe() string {
	if b.setupErr != nil || b.id == "" {
		return ""
	}
	workers := b.workers()
	cache := b.root
	if n, err := b.CacheSize(); err == nil {
		cache = fmt.Sprintf("%s (%s; delete it to clear)", b.root, humanBytes(n))
	}
	return fmt.Sprintf("%s; %d workers; cache %s", b.id, workers, cache)
}

// Available reports whether a C++17 compiler is present and the runner
// builds with it.
func (b *Backend) Available(ctx context.Context) (bool, string) {
	if err := b.setup(ctx); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// Compile translates src, compiles it and loads it into the runner. With
// src.Check the program is built for the checking mode.
func (b *Backend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	if err := b.setup(ctx); err != nil {
		return nil, &backend.Failure{Kind: backend.Unavailable, Msg: err.Error()}
	}
	tu, kernel, err := b.translate(ctx, src)
	if err != nil {
		return nil, err
	}
	return b.compileTranslated(ctx, src, tu, kernel, src.Check)
}

// CompileBoth compiles src for the plain and the checking mode (src.Check
// is ignored): the source is translated once (with the default translator,
// which does not depend on the mode) and the two builds run at once, on
// two cores where there are two. Each program, or its error, is returned
// as Compile would return it.
func (b *Backend) CompileBoth(ctx context.Context, src backend.Source) (plain, checking backend.Program, plainErr, checkErr error) {
	if err := b.setup(ctx); err != nil {
		f := &backend.Failure{Kind: backend.Unavailable, Msg: err.Error()}
		return nil, nil, f, f
	}
	src.Check = false
	var tu []byte
	var kernel string
	var err error
	shared := b.modeFreeTranslate
	if shared {
		if tu, kernel, err = b.translate(ctx, src); err != nil {
			return nil, nil, err, err
		}
	}
	var progs [2]backend.Program
	var errs [2]error
	var wg sync.WaitGroup
	for mode := range progs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := src
			s.Check = mode == 1
			if !shared {
				progs[mode], errs[mode] = b.Compile(ctx, s)
				return
			}
			progs[mode], errs[mode] = b.compileTranslated(ctx, s, tu, kernel, s.Check)
		}()
	}
	wg.Wait()
	return progs[0], progs[1], errs[0], errs[1]
}

// translate runs the translator on src under the compile time limit,
// its errors made Failures.
func (b *Backend) translate(ctx context.Context, src backend.Source) ([]byte, string, error) {
	timeout := b.compileTimeoutValue()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	tu, kernel, err := b.opts.Translate(tctx, src, b.pp)
	timedOut := errors.Is(tctx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if timedOut {
			return nil, "", &backend.Failure{Kind: backend.CompileTimeout,
				Msg: fmt.Sprintf("%s: translating took longer than %v, the compile time limit (--compile-timeout)", src.Name, timeout)}
		}
		var f *backend.Failure
		if errors.As(err, &f) {
			return nil, "", f
		}
		var env *backend.EnvError
		if errors.As(err, &env) {
			return nil, "", env
		}
		var r *translate.Refusal
		if errors.As(err, &r) && len(r.Errors) > 0 {
			return nil, "", &backend.Failure{Kind: backend.Refused, Msg: r.Errors[0].Error(), Log: r.Report()}
		}
		var pe *translate.PreprocessError
		if errors.As(err, &pe) {
			return nil, "", &backend.Failure{Kind: backend.CompileError, Msg: pe.Error(), Log: pe.Log}
		}
		return nil, "", &backend.Failure{Kind: backend.CompileError, Msg: firstLine(err.Error()), Log: err.Error()}
	}
	return tu, kernel, nil
}

// compileTranslated compiles src's translation tu and loads kernel.
func (b *Backend) compileTranslated(ctx context.Context, src backend.Source, tu []byte, kernel string, check bool) (backend.Program, error) {
	// The TU is self-contained: no include directory, no defines, and
	// no include closure to hash beyond its own text.
	p, err := b.compileCPP(ctx, CPPSource{Name: src.Name, CPP: tu, Kernel: kernel, Check: check})
	if err != nil {
		return nil, err
	}
	p.name, p.source = src.Name, src.Text
	return p, nil
}

// A CPPSource is a C++ TU implementing the mtl_rt ABI (runtime/mtl_rt.h).
type CPPSource struct {
	Name    string            // for diagnostics
	CPP     []byte            // the TU
	Kernel  string            // entry in its mtl_kernels table
	Dir     string            // extra include directory, "" for none
	Defines map[string]string // -D NAME=VALUE
	Check   bool              // build for the checking mode
}

// CompileCPP compiles an already-translated TU and loads its kernel. It is
// Compile without the translation step.
func (b *Backend) CompileCPP(ctx context.Context, src CPPSource) (backend.Program, error) {
	return b.compileCPP(ctx, src)
}

func (b *Backend) compileCPP(ctx context.Context, src CPPSource) (*program, error) {
	if err := b.setup(ctx); err != nil {
		return nil, &backend.Failure{Kind: backend.Unavailable, Msg: err.Error()}
	}
	so, err := b.compileSO(ctx, compileInput{cpp: src.CPP, name: src.Name, dir: src.Dir, defines: src.Defines, check: src.Check})
	if err != nil {
		return nil, err
	}
	p := b.newProgram(so, src.Kernel, src.Check)
	p.lock.Lock()
	defer p.lock.Unlock()
	if err := p.Load(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// maxLiveRunners bounds the runner processes a Backend keeps running, one
// per recently used program: two per core (a check's checking and plain
// builds) and two more, so that a pool of checks (one per core) does not
// stop the runners of programs it will run again.
func maxLiveRunners() int { return max(8, 2*runtime.NumCPU()+2) }

// Close stops every runner process. The Backend stays usable: programs
// start new runners when they next run.
func (b *Backend) Close() error {
	b.runMu.Lock()
	defer b.runMu.Unlock()
	b.pool.Close()
	return nil
}

// startRunner starts a runner and says hello.
func (b *Backend) startRunner(ctx context.Context) (*runner.Proc, error) {
	cpu := b.opts.CPULimit
	if cpu == 0 {
		cpu = DefaultCPULimit
	}
	mem := b.opts.MemoryLimit
	if mem == 0 {
		mem = defaultMemoryLimit()
	}
	p, err := startProc(runnerConfig{
		wrap: append(b.yieldPrefix(), b.runnerWrap...), path: b.runnerPath, workers: b.workers(),
		objects: filepath.Join(b.root, "so"), memory: mem, cpu: cpu, sandbox: !b.opts.NoSandbox,
	})
	if err != nil {
		return nil, err
	}
	reply, err := p.Call(ctx, runner.MsgHello, nil, loadTimeout)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("start runner: %w\n%s", err, p.Log())
	}
	d := runner.Decoder{B: reply}
	p.Hello = d.Str()
	b.starts.Add(1)
	return p, nil
}

// runnerConfig is how the cpu runner is started.
type runnerConfig struct {
	wrap    []string // command the runner is started under (tests), or nil
	path    string
	workers int
	objects string // the directory of compiled kernels, the only one it may read
	memory  int64  // bytes of private memory, 0: no limit
	cpu     int64  // seconds of CPU time, 0: no limit
	sandbox bool
}

// startProc starts a cpu runner with an empty environment; it sandboxes
// itself (see runtime/sandbox.cpp).
func startProc(c runnerConfig) (*runner.Proc, error) {
	var args []string
	if c.workers > 0 {
		args = append(args, "-workers", strconv.Itoa(c.workers))
	}
	if c.objects != "" {
		args = append(args, "-objects", c.objects)
	}
	if c.memory > 0 {
		args = append(args, "-memory", strconv.FormatInt(c.memory, 10))
	}
	if c.cpu > 0 {
		args = append(args, "-cpu", strconv.FormatInt(c.cpu, 10))
	}
	if !c.sandbox {
		args = append(args, "-no-sandbox")
	}
	var env []string
	if len(c.wrap) > 0 {
		env = os.Environ() // an emulator may need its environment
	}
	return runner.Start(runner.Config{Wrap: c.wrap, Path: c.path, Args: args, Env: env})
}

// Info describes the cpu backend: the host's CPU, the runner's workers,
// host-clock timings of the emulator.
func (b *Backend) Info(ctx context.Context) backend.Info {
	workers := b.workers()
	return backend.Info{
		Name: "cpu", Device: fmt.Sprintf("host CPU (%s, %s), %d runner workers, %s", runtime.GOOS, runtime.GOARCH, workers, b.id),
		Clock: "host", Orders: true, Check: true,
		Timing: "cpu emulator time: it exercises the search, it is not a GPU claim",
	}
}

// Runner describes a runner process: its fibers, workers, address layout
// and sandbox, as the runner itself reports them before it loads a kernel.
func (b *Backend) Runner(ctx context.Context) (string, error) {
	if err := b.setup(ctx); err != nil {
		return "", err
	}
	p, err := b.pool.Take(ctx)
	if err != nil {
		return "", err
	}
	hello := p.Hello
	b.pool.Keep(p)
	return hello, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Yield has the backend's compilers and runners started after it run at
// a lower scheduling priority (nice 10, where nice(1) is there), so that
// what shares the host with them gets the cores first when they are all
// busy (backend.Yielder): a sweep's pool verifying beside the samples and
// confirmations on a GPU. The runs keep every worker: one worker per run
// for a pool of 16 on 16 cores made the verifications four times slower
// in sum (2140 s against 518 s for 53 variants of qsa_flash on an H200),
// and the sweep slower.
func (b *Backend) Yield() {
	if nice, err := exec.LookPath("nice"); err == nil {
		b.nice.Store(&[]string{nice, "-n", "10"})
	}
}

// yieldPrefix is the command prefix that lowers a child's priority after
// Yield, else nil.
func (b *Backend) yieldPrefix() []string {
	if p := b.nice.Load(); p != nil {
		return *p
	}
	return nil
}

// workers is the worker count of the runners.
func (b *Backend) workers() int {
	if b.opts.Workers > 0 {
		return b.opts.Workers
	}
	return defaultWorkers()
}

// defaultWorkers is the runner's worker count when Options.Workers is 0.
func defaultWorkers() int { return runtime.NumCPU() }

// humanBytes formats n bytes with a binary unit, e.g. "12.3 MiB".
func humanBytes(n int64) string { return buildcache.HumanBytes(n) }
