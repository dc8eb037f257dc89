package cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"metalab/backend"
	"metalab/backend/runner"
	"metalab/translate"
)

// Compile translates src with the CUDA target (Options.Translate, default
// TranslateCUDA), compiles it with nvcc for the GPU and loads it into the
// runner. The cuda backend has no checking mode: a source with Check set
// is a Failure of kind Unavailable.
func (b *Backend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	if src.Check {
		return nil, &backend.Failure{Kind: backend.Unavailable,
			Msg: "the cuda backend has no checking mode: check on the cpu backend (compute-sanitizer's racecheck is Options.Racecheck)"}
	}
	if b.opts.Translate == nil {
		return nil, &backend.Failure{Kind: backend.Unavailable, Msg: "the CUDA translation target is not built yet"}
	}
	if err := b.device(ctx); err != nil {
		return nil, &backend.Failure{Kind: backend.Unavailable, Msg: err.Error()}
	}
	cu, err := b.translate(ctx, src)
	if err != nil {
		return nil, err
	}
	return b.CompileCU(ctx, cu)
}

// translate translates src into a CUSource, its errors made Failures as
// the cpu backend makes them: a source the vetting pass refuses is
// Refused, one the preprocessor or the translator rejects a CompileError;
// a compiler that cannot run is an EnvError.
func (b *Backend) translate(ctx context.Context, src backend.Source) (CUSource, error) {
	cu, kernel, err := b.opts.Translate(ctx, src, b.pp)
	if err != nil {
		if ctx.Err() != nil {
			return CUSource{}, ctx.Err()
		}
		var f *backend.Failure
		if errors.As(err, &f) {
			return CUSource{}, f
		}
		var env *backend.EnvError
		if errors.As(err, &env) {
			return CUSource{}, env
		}
		var r *translate.Refusal
		if errors.As(err, &r) && len(r.Errors) > 0 {
			return CUSource{}, &backend.Failure{Kind: backend.Refused, Msg: r.Errors[0].Error(), Log: r.Report()}
		}
		var pe *translate.PreprocessError
		if errors.As(err, &pe) {
			return CUSource{}, &backend.Failure{Kind: backend.CompileError, Msg: pe.Error(), Log: pe.Log}
		}
		return CUSource{}, &backend.Failure{Kind: backend.CompileError, Msg: firstLine(err.Error()), Log: err.Error()}
	}
	// The TU is self-contained: no include directory, no defines, and no
	// include closure to hash beyond its own text.
	return CUSource{Name: src.Name, CU: cu, Kernel: kernel}, nil
}

// CompileCU compiles an already-translated TU (or a hand-written one) for
// the GPU and loads its kernel. It is Compile without the translation.
func (b *Backend) CompileCU(ctx context.Context, src CUSource) (backend.Program, error) {
	if err := b.device(ctx); err != nil {
		return nil, &backend.Failure{Kind: backend.Unavailable, Msg: err.Error()}
	}
	// The program's runner starts while nvcc compiles: its CUDA context's
	// start is not paid after the compile.
	b.pool.Prestart()
	so, err := b.compileObject(ctx, src, b.arch, b.opts.Racecheck)
	if err != nil {
		return nil, err
	}
	return b.shareProgram(ctx, so, src)
}

// shareProgram returns a program of kernel src.Kernel in object so: the
// live one when another compile made the same object (a variant's stage
// whose translation is the baseline's, the entry reaching none of the
// variant's edits), else a new one, loaded. Programs with one object run
// the same machine code, so sharing their runner shares nothing one
// kernel could do to another's results; it saves each such stage a runner
// (a CUDA context), its load, and the transfers of its inputs, which the
// shared runner keeps.
func (b *Backend) shareProgram(ctx context.Context, so string, src CUSource) (backend.Program, error) {
	key := so + "\x00" + src.Kernel
	b.shareMu.Lock()
	if s := b.shared[key]; s != nil {
		s.refs++
		b.shareMu.Unlock()
		return &sharedProgram{program: s.p, s: s}, nil
	}
	b.shareMu.Unlock()
	p := b.newProgram(so, src.Kernel, src.Name)
	if err := p.LoadAhead(ctx); err != nil {
		return nil, err
	}
	b.shareMu.Lock()
	defer b.shareMu.Unlock()
	if s := b.shared[key]; s != nil {
		// Another compile of the same object loaded it meanwhile.
		s.refs++
		go p.Close()
		return &sharedProgram{program: s.p, s: s}, nil
	}
	s := &share{p: p, key: key, refs: 1}
	if b.shared == nil {
		b.shared = map[string]*share{}
	}
	b.shared[key] = s
	return &sharedProgram{program: p, s: s}, nil
}

// A share is a loaded program and how many compiles hold it.
type share struct {
	p    *program
	key  string
	refs int // guarded by Backend.shareMu
}

// A sharedProgram is one compile's hold on a shared program: its Close
// releases the hold, and the last one closes the program.
type sharedProgram struct {
	*program
	s      *share
	closed sync.Once
}

func (h *sharedProgram) Close() error {
	h.closed.Do(func() {
		b := h.program.b
		b.shareMu.Lock()
		h.s.refs--
		last := h.s.refs == 0
		if last && b.shared[h.s.key] == h.s {
			delete(b.shared, h.s.key)
		}
		b.shareMu.Unlock()
		if last {
			h.program.Close()
		}
	})
	return nil
}

// A program is a kernel loaded into a runner process of its own, which
// loads no other kernel object: the lifecycle runner.Program shares with
// the cpu backend (a new runner, and the kernel loaded again, when its
// runner died or was stopped), with what the cuda runner reports of the
// compiled function and, under racecheck, the findings of its log.
type program struct {
	*runner.Program
	b          *Backend
	so, kernel string
	name       string // the source's name

	// What the last LOAD said; guarded by b.mu.
	tgMem, maxThreads int
	staticShared      int // nvcc's static shared memory (cudaFuncGetAttributes)
	resources         string
}

var (
	_ backend.Program       = (*program)(nil)
	_ backend.ObjectProgram = (*program)(nil)
)

// newProgram returns the program of kernel in so, not loaded yet.
func (b *Backend) newProgram(so, kernel, name string) *program {
	p := &program{b: b, so: so, kernel: kernel, name: name}
	p.Program = runner.NewProgram(b.pool, &b.mu, so, kernel, runner.ProgramHooks{
		LoadTimeout: loadTimeout, DefaultTimeout: DefaultTimeout, MaxIndex: maxBufferIndex,
		Loaded: func(_ *runner.Proc, l *runner.Loaded) {
			p.tgMem, p.maxThreads, p.resources, p.staticShared = l.TGMem, l.MaxThreads, l.Resources, l.StaticShared
		},
		Run:     p.dispatch,
		Failure: p.failure,
	})
	return p
}

// ThreadgroupMemory is the kernel's static threadgroup memory counted by
// Metal's rule, as the cpu backend and msl's estimate count it: its
// declarations in the order msl lays them out, each aligned, the total
// rounded up to 16 bytes (the sizes are the compiler's). check's
// threadgroup-memory figures and limit then mean the same on every
// backend. For a TU whose table does not list every declaration (a
// hand-written one) it is nvcc's figure, StaticSharedMemory.
func (p *program) ThreadgroupMemory() int {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.tgMem
}

// StaticSharedMemory is what the GPU allocates for the kernel's
// threadgroup declarations: the compiled function's static shared memory
// (cudaFuncGetAttributes' sharedSizeBytes), nvcc's layout. It lies between
// the declarations' sizes and ThreadgroupMemory: nvcc packs the
// declarations its own way and does not round the total up to 16 bytes.
func (p *program) StaticSharedMemory() int {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.staticShared
}

// MaxThreadsPerThreadgroup is the compiled function's maxThreadsPerBlock
// (registers permitting), at most the kernel's declared maximum.
func (p *program) MaxThreadsPerThreadgroup() int {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.maxThreads
}

// Resources describes the compiled function as the runner reports it:
// registers, local (spilled) memory, static shared memory, constant memory,
// the largest block and the binary's architecture.
func (p *program) Resources() string {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.resources
}

// Run binds d's buffers, launches the kernel d.Repeat times on one stream
// between two CUDA events and reads back every device buffer.
// Result.Total is the events' elapsed time; Times stays empty (launches
// on one stream are not timed apart). d.Order is validated but cannot be
// honoured: the GPU schedules threads itself. A runner that broke the
// protocol is restarted and the run done once more.
func (p *program) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	return p.Program.Run(ctx, d)
}

// dispatch is one dispatch on the program's runner r, under the launch
// lock (a runner started ahead of its use does not overlap it), with
// racecheck's findings of the run. The caller holds p.b.mu.
func (p *program) dispatch(ctx context.Context, r *runner.Proc, bufs []backend.Buffer, d runner.Dispatch, timeout time.Duration) (*backend.Result, error) {
	log := p.b.raceLogOf(r)
	var mark int64
	if log != nil {
		mark = log.size()
	}
	p.b.launch.Lock()
	reply, err := r.Execute(ctx, bufs, d, timeout, loadTimeout)
	p.b.launch.Unlock()
	if err != nil {
		var f *backend.Failure
		if log != nil && errors.As(err, &f) {
			f.Findings = append(f.Findings, parseRacecheck(log.since(mark, false), p.name)...)
		}
		return nil, err
	}
	res := &backend.Result{Outputs: reply.Outputs, Total: reply.Total}
	if log != nil {
		res.Findings = parseRacecheck(log.since(mark, true), p.name)
	}
	return res, nil
}

// failure turns an ERR reply to a dispatch into the kernel's Failure.
func (p *program) failure(e *runner.Error, log string) error {
	switch e.Kind {
	case runner.ErrBadAccess:
		return &backend.Failure{Kind: backend.BadAccess, Msg: e.Msg, Log: log}
	case runner.ErrLaunch:
		// Metal would refuse the same dispatch when it creates the
		// pipeline or encodes it; the metal backend reports that as a
		// crash too.
		return &backend.Failure{Kind: backend.Crash, Msg: "launch refused: " + e.Msg, Log: log}
	}
	return fmt.Errorf("run %s: %w", p.kernel, e)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Build is Compile without the GPU: it translates src and compiles it with
// nvcc for arch ("sm_90") into the compile cache, and returns the shared
// object's path. It needs nvcc and the C++ preprocessor, not a GPU; its
// failures are those of Compile.
func (b *Backend) Build(ctx context.Context, src backend.Source, arch string) (string, error) {
	if src.Check {
		return "", &backend.Failure{Kind: backend.Unavailable, Msg: "the cuda backend has no checking mode"}
	}
	if b.opts.Translate == nil {
		return "", &backend.Failure{Kind: backend.Unavailable, Msg: "the CUDA translation target is not built yet"}
	}
	cu, err := b.translate(ctx, src)
	if err != nil {
		return "", err
	}
	return b.BuildCU(ctx, cu, arch)
}

// BuildCU is CompileCU without the GPU: it compiles an already-translated
// TU with nvcc for arch into the compile cache and returns the shared
// object's path.
func (b *Backend) BuildCU(ctx context.Context, src CUSource, arch string) (string, error) {
	if arch == "" {
		return "", errors.New("build: no GPU architecture given (sm_XY)")
	}
	return b.compileObject(ctx, src, arch, b.opts.Racecheck)
}
