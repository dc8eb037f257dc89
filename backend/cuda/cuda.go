package cuda

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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
	cudatarget "metalab/translate/cuda"
)

// A TranslateFunc turns a Metal source into one self-contained CUDA TU in
// the shape runtime/mtl_cuda.h describes (it includes nothing but the
// prelude and mtl_cuda.h: the source's headers and defines are already
// applied) and names src.Entry's entry in its kernel table. pp runs the C++
// compiler's preprocessor.
type TranslateFunc func(ctx context.Context, src backend.Source, pp *translate.Preprocessor) (cu []byte, kernel string, err error)

// TranslateCUDA is the translator Backends use when Options.Translate is
// unset: package translate with the CUDA target (package translate/cuda).
// Compile reports the backend unavailable for translated sources when it
// is nil (CompileCU runs hand-written TUs).
var TranslateCUDA TranslateFunc = func(ctx context.Context, src backend.Source, pp *translate.Preprocessor) ([]byte, string, error) {
	u, err := translate.Translate(ctx, src, translate.Options{Target: cudatarget.Target, Preprocessor: pp})
	if err != nil {
		return nil, "", err
	}
	return u.Text, u.Entry, nil
}

// Options configure a Backend. Zero values select the defaults.
type Options struct {
	CacheDir string // runner, headers and compiled kernels (under cuda/); default $METALAB_CACHE or <user cache dir>/metalab
	// NVCC is the nvcc command; default $NVCC, else nvcc on $PATH, in
	// $CUDA_HOME/bin or in /usr/local/cuda/bin.
	NVCC string
	// Device is the CUDA device index (after CUDA_VISIBLE_DEVICES); default 0.
	Device int
	// Arch is the GPU architecture kernels are built for ("sm_90");
	// default the device's own.
	Arch string

	// Racecheck runs the runner under compute-sanitizer's racecheck tool
	// (see the package documentation): Result.Findings then holds the
	// shared-memory races it reports, and times are not the kernel's.
	Racecheck bool
	// Sanitizer is the compute-sanitizer command; default
	// $COMPUTE_SANITIZER, else compute-sanitizer on $PATH or next to nvcc.
	Sanitizer string

	// Translate turns sources into CUDA; default TranslateCUDA.
	Translate TranslateFunc
	// CXX is the C++ compiler whose preprocessor the translation runs
	// (Metal's includes, defines and macros); default $CXX or "g++".
	CXX string
	// Prelude holds the metal_stdlib headers and PreludeVersion names them
	// (for the compile cache); default the cpu backend's prelude, which
	// compiles for the GPU through runtime/mtl_rt.h.
	Prelude        fs.FS
	PreludeVersion string

	// CompileTimeout bounds each nvcc run for a kernel; 0 means 120 s.
	// SetCompileTimeout overrides it.
	CompileTimeout time.Duration

	// Runners bounds the runner processes kept alive, one per recently
	// used program; 0 means maxLiveRunners. Each holds a CUDA context and
	// a share of the GPU's memory for the inputs it keeps.
	Runners int
}

// A Backend compiles kernels with nvcc and runs them on an NVIDIA GPU.
// Every program (every compiled variant) runs in a runner process of its
// own, so nothing one kernel does to its runner reaches another's results;
// at most Options.Runners are kept (the least recently used program's is
// stopped and started again when it next runs). Requests to runners are
// serialised.
type Backend struct {
	opts Options
	pp   *translate.Preprocessor // the C++ compiler's preprocessor, for translation

	toolOnce sync.Once // nvcc, the cache and the headers
	toolErr  error
	nvcc     []string
	nvccID   string // "Cuda compilation tools, release 11.8, V11.8.89"
	libDirs  []string
	root     string // <cache>/cuda
	incs     []string

	devOnce    sync.Once // the runner and the GPU it found
	devErr     error
	runnerPath string
	gpu        Hello
	arch       string

	compilerRuns   atomic.Int64             // nvcc invocations for kernels, for tests
	exactKey       bool                     // key objects on the TU's exact text (benchmarks)
	flagEdit       func([]string) []string  // edits a kernel compile's nvcc flags (benchmarks)
	buildMu        sync.Mutex               // guards inflight
	inflight       map[string]chan struct{} // kernel objects being compiled, by key
	compileTimeout buildcache.CompileLimit  // SetCompileTimeout's, else Options'

	// mu serialises the requests to runners and guards gpu after setup.
	// Every program has a runner process of its own (pool): no two
	// programs, no two variants' different objects, share a process.
	mu   sync.Mutex
	pool *runner.Pool
	// launch is held while a kernel runs (a dispatch) and while a runner
	// is started ahead of its use: a CUDA context's start does not
	// overlap a timed run.
	launch sync.Mutex
	// shared holds the live programs by object and kernel: compiles of
	// one object share a program (shareProgram).
	shareMu sync.Mutex
	shared  map[string]*share
	logMu   sync.Mutex
	logs    map[*runner.Proc]*raceLog // racecheck's report of each runner
	testEnv []string                  // added to the runner's environment, for tests
}

var (
	_ backend.Backend       = (*Backend)(nil)
	_ backend.RunnerCounter = (*Backend)(nil)
)

// DefaultTimeout bounds one Run's dispatches when Dispatch.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// loadTimeout bounds the requests that run no kernel code; startTimeout
// the runner's start (CUDA's initialisation) and HELLO.
const (
	loadTimeout  = 60 * time.Second
	startTimeout = 2 * time.Minute
)

// maxLiveRunners bounds the runner processes a Backend keeps, one per
// recently used program (each holds a CUDA context and its kept copies,
// a share of the GPU's memory: see the runner's -keep-share).
// Eight: a sweep's confirmation runs the baseline's stages and the
// variant's changed one while the pool's compiles load theirs; with four,
// the compiles' loads evicted the runners of the stages being confirmed
// and timed, 416 starts for 19 variants of qsa_flash on an H200.
const maxLiveRunners = 8

// maxBufferIndex is the largest [[buffer(n)]] and [[threadgroup(n)]]
// index: Metal's argument table has 31 entries.
const maxBufferIndex = 30

// New returns a cuda Backend. Nothing is built or started until first use.
func New(opts Options) *Backend {
	if opts.Translate == nil {
		opts.Translate = TranslateCUDA
	}
	if opts.CXX == "" {
		opts.CXX = os.Getenv("CXX")
	}
	if opts.CXX == "" {
		opts.CXX = "g++"
	}
	if opts.Prelude == nil {
		opts.Prelude = prelude.FS
		if opts.PreludeVersion == "" {
			opts.PreludeVersion = prelude.Version
		}
	}
	if opts.Runners <= 0 {
		opts.Runners = maxLiveRunners
	}
	b := &Backend{opts: opts, pp: &translate.Preprocessor{CXX: strings.Fields(opts.CXX)}}
	// A spare runner is started ahead of the next program's first run,
	// and evicted runners exit in the background: a runner's start (a
	// CUDA context) and its exit took a sweep's confirmation turns and
	// measurements a third of their time on an H200, under the backend's
	// request lock. The spare's start waits for the launch lock, so it
	// never overlaps a dispatch.
	b.pool = &runner.Pool{Max: opts.Runners, Start: b.startRunner, Spare: true, Background: true, Ahead: func(ctx context.Context) (*runner.Proc, error) {
		b.launch.Lock()
		defer b.launch.Unlock()
		return b.startRunner(ctx)
	}}
	return b
}

// RunnerStarts is the runner processes the backend started and their
// starts' wall time summed (backend.RunnerCounter).
func (b *Backend) RunnerStarts() (int64, time.Duration) { return b.pool.Starts(), b.pool.StartTime() }

// RunnerRequests is what the runners' requests cost so far, by type
// (backend.RunnerCounter).
func (b *Backend) RunnerRequests() []backend.RequestStat { return b.pool.Requests() }

// KeepPrograms keeps runners for at least n programs (backend.ProgramKeeper):
// a sweep's pool confirms variants ahead of their timing, and with too
// few runners the next one to time is always the least recently used,
// started again for its measurement. Runners started after it keep their
// copies of buffers in a smaller share of the GPU's memory.
func (b *Backend) KeepPrograms(n int) { b.pool.Raise(n) }

// Name returns "cuda".
func (b *Backend) Name() string { return "cuda" }

// toolchain finds nvcc and installs the headers, once.
func (b *Backend) toolchain(ctx context.Context) error {
	b.toolOnce.Do(func() { b.toolErr = b.setupToolchain(ctx) })
	return b.toolErr
}

func (b *Backend) setupToolchain(ctx context.Context) error {
	nvcc, err := findNVCC(b.opts.NVCC)
	if err != nil {
		return err
	}
	b.nvcc = nvcc
	b.nvccID, err = nvccVersion(ctx, nvcc)
	if err != nil {
		return err
	}
	b.libDirs = nvccLibDirs(ctx, nvcc)
	root, err := buildcache.Root(b.opts.CacheDir)
	if err != nil {
		return err
	}
	b.root = filepath.Join(root, "cuda")
	if err := os.MkdirAll(b.root, 0o755); err != nil {
		return fmt.Errorf("create cache dir: %w", err)
	}
	buildcache.CleanStale(time.Now(), b.root, filepath.Join(b.root, "so"))
	b.incs, err = b.installHeaders()
	return err
}

// device builds and starts the runner and learns the GPU, once.
func (b *Backend) device(ctx context.Context) error {
	if err := b.toolchain(ctx); err != nil {
		return err
	}
	b.devOnce.Do(func() { b.devErr = b.setupDevice(ctx) })
	return b.devErr
}

func (b *Backend) setupDevice(ctx context.Context) error {
	if b.opts.Racecheck {
		if _, err := b.sanitizer(); err != nil {
			return err
		}
	}
	path, err := b.buildRunner(ctx)
	if err != nil {
		return fmt.Errorf("cannot build the cuda runner with %s: %w", b.nvcc[0], err)
	}
	b.runnerPath = path
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := b.startRunner(ctx)
	if err != nil {
		return err
	}
	b.gpu, err = parseHello(r.HelloReply)
	if err != nil {
		r.Close()
		return err
	}
	// The runner that found the GPU is the first program's.
	b.pool.Keep(r)
	if !b.gpu.Ready {
		return fmt.Errorf("no usable NVIDIA GPU: %s", b.gpu.Error)
	}
	b.arch = b.opts.Arch
	if b.arch == "" {
		b.arch = b.gpu.Arch()
	}
	return nil
}

// gpuPresent reports whether the machine shows signs of an NVIDIA GPU and
// its driver: a GPU device node (/dev/nvidia0, ...; not /dev/nvidiactl,
// which the CUDA library creates even where there is no GPU), the kernel
// driver's proc entry, or nvidia-smi. It is the quick test before anything
// is built; the runner has the last word.
func gpuPresent() bool {
	if nodes, _ := filepath.Glob("/dev/nvidia[0-9]*"); len(nodes) > 0 {
		return true
	}
	if _, err := os.Stat("/proc/driver/nvidia/version"); err == nil {
		return true
	}
	_, err := exec.LookPath("nvidia-smi")
	return err == nil
}

// Available reports whether nvcc and an NVIDIA GPU are present and the
// runner can use the GPU, saying precisely what is missing. Where either
// is missing it answers at once; the first call on a machine with both
// builds the runner (nvcc, some seconds; cached) and starts it.
func (b *Backend) Available(ctx context.Context) (bool, string) {
	nvcc, err := findNVCC(b.opts.NVCC)
	if err != nil {
		return false, err.Error()
	}
	if err := b.haveCXX(); err != nil {
		return false, err.Error()
	}
	if !gpuPresent() {
		// Said before nvcc runs or anything is installed: --backend auto
		// asks on every machine.
		return false, fmt.Sprintf("nvcc is installed (%s), but this machine shows no NVIDIA GPU (no /dev/nvidia0, no NVIDIA kernel driver, no nvidia-smi)", nvcc[0])
	}
	if err := b.device(ctx); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// haveCXX says whether the C++ compiler whose preprocessor the translation
// runs is there.
func (b *Backend) haveCXX() error {
	if len(b.pp.CXX) == 0 {
		return errors.New("no C++ compiler for the translation's preprocessor: set CXX")
	}
	if _, err := exec.LookPath(b.pp.CXX[0]); err != nil {
		return fmt.Errorf("no C++ compiler for the translation's preprocessor: %s not found (install g++, or set CXX): %w", b.pp.CXX[0], err)
	}
	return nil
}

// nvccRelease is "nvcc 11.8" (or "nvcc" when the version is unknown).
func (b *Backend) nvccRelease() string {
	if _, rel, ok := strings.Cut(b.nvccID, "release "); ok {
		v, _, _ := strings.Cut(rel, ",")
		return "nvcc " + v
	}
	return "nvcc"
}

// Compiler names the compiler the kernels are built with and the
// architecture they are built for ("nvcc 13.0, sm_90"), for provenance;
// "" before the GPU is known.
func (b *Backend) Compiler() string {
	if b.devErr != nil || b.arch == "" {
		return ""
	}
	return b.nvccRelease() + ", " + b.arch
}

// Info describes the cuda backend: the GPU, its clock, CUDA-event timings.
func (b *Backend) Info(ctx context.Context) backend.Info {
	info := backend.Info{Name: "cuda", Clock: "gpu", Orders: false, Check: false,
		Timing: "CUDA events around K launches on one stream: GPU time of the dispatches together"}
	if err := b.device(ctx); err != nil {
		info.Device = "unavailable: " + err.Error()
		return info
	}
	info.Device = b.gpu.Describe()
	if b.opts.Racecheck {
		info.Timing = "under compute-sanitizer racecheck: times are the instrumented kernel's, not a claim about the GPU"
	}
	return info
}

// Describe names the compiler, the architecture and the cache; it is meant
// for `metalab backends` after Available returned true.
func (b *Backend) Describe() string {
	if b.devErr != nil || b.arch == "" {
		return ""
	}
	cache := b.root
	if n, err := b.CacheSize(); err == nil {
		cache = fmt.Sprintf("%s (%s; delete it to clear)", b.root, buildcache.HumanBytes(n))
	}
	rc := ""
	if b.opts.Racecheck {
		rc = "; racecheck on"
	}
	return fmt.Sprintf("%s; %s; %s%s; cache %s", b.gpu.Name, b.nvccRelease(), b.arch, rc, cache)
}

// Runner describes the runner process and the GPU, as the runner reports
// them. It starts one if needed.
func (b *Backend) Runner(ctx context.Context) (string, error) {
	if err := b.device(ctx); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p, err := b.pool.Take(ctx)
	if err != nil {
		return "", err
	}
	hello := p.Hello
	b.pool.Keep(p)
	return hello, nil
}

// CacheDir returns the directory holding the cuda runner, headers and
// compiled kernels, or "" before the backend was set up.
func (b *Backend) CacheDir() string {
	if b.toolErr != nil {
		return ""
	}
	return b.root
}

// CacheSize returns the bytes used by the files under the cache directory.
func (b *Backend) CacheSize() (int64, error) {
	root := b.CacheDir()
	if root == "" {
		return 0, errors.New("cache size: backend not set up")
	}
	return buildcache.Size(root)
}

// Close stops every runner process. The Backend stays usable: programs
// start new runners when they next run.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pool.Close()
	return nil
}

// runnerEnv is the environment the runner gets: what the CUDA driver, the
// runtime and compute-sanitizer read, nothing else.
func runnerEnv() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "CUDA_"), strings.HasPrefix(k, "NVIDIA_"), strings.HasPrefix(k, "__NV"),
			k == "PATH", k == "HOME", k == "TMPDIR", k == "LD_LIBRARY_PATH":
			env = append(env, kv)
		}
	}
	return env
}

// startRunner starts a runner and says hello; the caller holds b.mu or
// b.launch (a start ahead of use). Each runner loads one program's kernel
// object in its life.
func (b *Backend) startRunner(ctx context.Context) (*runner.Proc, error) {
	args := []string{"-device", strconv.Itoa(b.opts.Device), "-keep-share", strconv.Itoa(b.pool.Limit() + 1)}
	cfg := runner.Config{Path: b.runnerPath, Args: args, Env: append(runnerEnv(), b.testEnv...)}
	var l *raceLog
	if b.opts.Racecheck {
		san, err := b.sanitizer()
		if err != nil {
			return nil, err
		}
		if l, err = newRaceLog(b.root); err != nil {
			return nil, &backend.EnvError{Op: "start racecheck", Err: err}
		}
		cfg.Wrap = append(append([]string{}, san...), racecheckArgs(l.path)...)
	}
	p, err := runner.Start(cfg)
	if err != nil {
		if l != nil {
			l.close()
		}
		return nil, err
	}
	if l != nil {
		b.logMu.Lock()
		if b.logs == nil {
			b.logs = map[*runner.Proc]*raceLog{}
		}
		b.logs[p] = l
		b.logMu.Unlock()
		p.OnClose = func() {
			b.logMu.Lock()
			delete(b.logs, p)
			b.logMu.Unlock()
			l.close()
		}
	}
	reply, err := p.Call(ctx, runner.MsgHello, nil, startTimeout)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("start the cuda runner: %w\n%s", err, p.Log())
	}
	h, err := parseHello(reply)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("start the cuda runner: %w", err)
	}
	p.Hello = h.Text
	p.HelloReply = reply
	p.Keeps = true
	return p, nil
}

// raceLogOf returns racecheck's report of runner p, or nil.
func (b *Backend) raceLogOf(p *runner.Proc) *raceLog {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	return b.logs[p]
}

// A Hello is what the cuda runner says of itself and its GPU.
type Hello struct {
	Text            string
	Ready           bool   // a GPU is usable
	Error           string // why not
	Name            string
	Major, Minor    int
	Driver, Runtime int // CUDA's 1000*major + 10*minor
	SMs             int
	Memory          uint64
	MaxThreads      int
	SharedPerBlock  uint64
	SharedOptin     uint64
	Devices, Index  int
}

// Arch returns the GPU's architecture name, e.g. "sm_90".
func (h Hello) Arch() string { return fmt.Sprintf("sm_%d%d", h.Major, h.Minor) }

// Describe formats the GPU for Info: "NVIDIA H200 (sm_90, 132 SMs, 139.8
// GiB; driver 13.0, runtime 13.0)".
func (h Hello) Describe() string {
	return fmt.Sprintf("%s (%s, %d SMs, %.1f GiB; driver %s, runtime %s)", h.Name, h.Arch(), h.SMs,
		float64(h.Memory)/float64(1<<30), cudaVersion(h.Driver), cudaVersion(h.Runtime))
}

func cudaVersion(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

func parseHello(b []byte) (Hello, error) {
	d := runner.Decoder{B: b}
	h := Hello{Text: d.Str()}
	h.Ready = d.U8() != 0
	h.Error = d.Str()
	h.Name = d.Str()
	h.Major, h.Minor = int(d.U32()), int(d.U32())
	h.Driver, h.Runtime = int(d.U32()), int(d.U32())
	h.SMs = int(d.U32())
	h.Memory = d.U64()
	h.MaxThreads = int(d.U32())
	h.SharedPerBlock, h.SharedOptin = d.U64(), d.U64()
	h.Devices, h.Index = int(d.U32()), int(d.U32())
	if d.Err != nil {
		return Hello{}, fmt.Errorf("the runner's HELLO: %w (is it the cuda runner?)", d.Err)
	}
	return h, nil
}
