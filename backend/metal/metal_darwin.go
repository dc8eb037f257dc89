//go:build darwin && cgo

package metal

/*
#cgo CFLAGS: -x objective-c
#cgo LDFLAGS: -framework Metal -framework CoreGraphics -framework Foundation
#import <Metal/Metal.h>

// metalab_default_device returns the system default Metal device or, where
// there is none (ssh sessions, some CI runners), the first of all devices;
// retained (+1, the file is not compiled with ARC). NULL means the machine
// has no Metal device.
static void *metalab_default_device(void) {
	id<MTLDevice> d = MTLCreateSystemDefaultDevice();
	if (d == nil) {
		NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
		if (all.count > 0) {
			d = [[all objectAtIndex:0] retain];
		}
		[all release];
	}
	return (void *)d;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"

	"metalab/backend"
)

// Metal's MTLMathMode and MTLMathFloatingPointFunctions values (macOS 15;
// darwinkit v0.5.0 predates them, so they are sent as raw selectors).
const (
	mathModeSafe              = int64(0) // MTLMathModeSafe
	mathFloatFunctionsPrecise = int64(1) // MTLMathFloatingPointFunctionsPrecise
)

// A gpu is the process's Metal device and the command queue every program
// submits to. It is opened once and lives as long as the process.
type gpu struct {
	dev   metal.DeviceObject
	queue metal.CommandQueueObject

	name         string
	unified      bool
	maxTGMem     int
	maxDim       [3]int
	maxBufferLen int
	mathMode     bool   // MTLCompileOptions has mathMode (macOS 15+)
	language     uint   // the default MTLLanguageVersion
	os           string // operating system version string
}

var (
	gpuOnce sync.Once
	theGPU  *gpu
	gpuErr  error
)

// system returns the process's gpu, opening it on first use.
func system() (*gpu, error) {
	gpuOnce.Do(func() { theGPU, gpuErr = openGPU() })
	return theGPU, gpuErr
}

func openGPU() (*gpu, error) {
	var g *gpu
	err := inPool(func() error {
		dev := metal.DeviceObject{Object: objc.ObjectFrom(C.metalab_default_device())}
		if dev.IsNil() {
			return errors.New("metal backend: no Metal device (MTLCreateSystemDefaultDevice and MTLCopyAllDevices found none)")
		}
		queue := dev.NewCommandQueue()
		if queue.IsNil() {
			dev.Release()
			return errors.New("metal backend: the Metal device would not create a command queue")
		}
		opts := metal.CompileOptionsClass.Alloc().Init()
		defer opts.Release()
		size := dev.MaxThreadsPerThreadgroup()
		g = &gpu{
			dev: dev, queue: queue,
			name:         dev.Name(),
			unified:      dev.HasUnifiedMemory(),
			maxTGMem:     int(dev.MaxThreadgroupMemoryLength()),
			maxDim:       [3]int{int(size.Width), int(size.Height), int(size.Depth)},
			maxBufferLen: int(dev.MaxBufferLength()),
			mathMode:     opts.RespondsToSelector(objc.Sel("setMathMode:")),
			language:     uint(opts.LanguageVersion()),
			os:           foundation.ProcessInfo_ProcessInfo().OperatingSystemVersionString(),
		}
		return nil
	})
	return g, err
}

// inPool runs f inside an autorelease pool (darwinkit returns most objects
// autoreleased, and Go threads have no pool of their own) and turns a
// darwinkit panic, such as "object is nil", into an error.
func inPool(f func() error) (err error) {
	objc.WithAutoreleasePool(func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("metal backend: darwinkit call failed: %v", r)
			}
		}()
		err = f()
	})
	return err
}

// A Backend compiles kernels with the Metal compiler of the running macOS
// and runs them on the system's Metal device.
type Backend struct{}

// New returns a metal Backend. The device is opened on first use.
func New() *Backend { return &Backend{} }

// Name returns "metal".
func (b *Backend) Name() string { return Name }

// Available reports whether a Metal device was found.
func (b *Backend) Available(context.Context) (bool, string) {
	if _, err := system(); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// Info describes the Metal device: GPU timestamps, hardware thread order,
// no checking mode.
func (b *Backend) Info(ctx context.Context) backend.Info {
	return backend.Info{Name: Name, Device: b.Describe(), Clock: "gpu", Orders: false, Check: false,
		Timing: "Metal GPU time (GPUStartTime to GPUEndTime of one command buffer)"}
}

// Describe names the device and the compiler settings, for `metalab
// backends`.
func (b *Backend) Describe() string {
	g, err := system()
	if err != nil {
		return ""
	}
	mem := "discrete memory"
	if g.unified {
		mem = "unified memory"
	}
	math := "fastMathEnabled=NO (macOS before 15)"
	if g.mathMode {
		math = "mathMode=safe, precise math functions"
	}
	return fmt.Sprintf("%s (%s); %d B threadgroup memory; %s; default MSL %d.%d; %s",
		g.name, mem, g.maxTGMem, math, g.language>>16, g.language&0xffff, g.os)
}

// Compile compiles src with the Metal compiler (fast math off), specialises
// its entry point with src.Constants and builds a compute pipeline.
// Everything Metal rejects is a *backend.Failure of kind CompileError with
// the compiler's log, positions given in src.Name.
func (b *Backend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	g, err := system()
	if err != nil {
		return nil, &backend.Failure{Kind: backend.Unavailable, Msg: err.Error()}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text, err := librarySource(src)
	if err != nil {
		return nil, &backend.Failure{Kind: backend.CompileError, Msg: err.Error(), Log: err.Error()}
	}
	var p *program
	err = inPool(func() error {
		lib, err := g.library(src, text)
		if err != nil {
			return err
		}
		defer lib.Release()
		fn, err := g.function(lib, src)
		if err != nil {
			return err
		}
		defer fn.Release()
		pso, err := g.pipeline(fn, src)
		if err != nil {
			return err
		}
		p = &program{
			g: g, pso: pso, kernel: src.Entry,
			tgMem:      int(pso.StaticThreadgroupMemoryLength()),
			maxThreads: int(pso.MaxTotalThreadsPerThreadgroup()),
			simdWidth:  int(pso.ThreadExecutionWidth()),
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// library compiles text (src after include expansion) into a library
// (+1). Fast math is off: mathMode safe with precise math functions where
// the OS has them (macOS 15), else fastMathEnabled NO. src.Defines become
// preprocessor macros.
func (g *gpu) library(src backend.Source, text string) (metal.LibraryObject, error) {
	opts := metal.CompileOptionsClass.Alloc().Init()
	defer opts.Release()
	if g.mathMode {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), mathModeSafe)
		if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {
			objc.Call[objc.Void](opts, objc.Sel("setMathFloatingPointFunctions:"), mathFloatFunctionsPrecise)
		}
	} else {
		opts.SetFastMathEnabled(false)
	}
	if len(src.Defines) > 0 {
		macros := make(map[string]objc.IObject, len(src.Defines))
		for name, v := range src.Defines {
			macros[name] = foundation.NewStringWithString(macroValue(v))
		}
		opts.SetPreprocessorMacros(macros)
	}
	var nserr foundation.Error
	lib := g.dev.NewLibraryWithSourceOptionsError(text, opts, unsafe.Pointer(&nserr))
	if lib.IsNil() {
		return lib, compileFailure(src.Name, errorText(nserr, "the Metal compiler failed without a message"))
	}
	return lib, nil
}

// function returns src.Entry from lib (+1), specialised with
// src.Constants when it declares function constants. A constant the entry
// does not use is ignored, as on the cpu backend; one given with a type
// other than its declaration's is a CompileError.
func (g *gpu) function(lib metal.LibraryObject, src backend.Source) (metal.FunctionObject, error) {
	fn := lib.NewFunctionWithName(src.Entry)
	if fn.IsNil() {
		names := lib.FunctionNames()
		sort.Strings(names)
		return fn, &backend.Failure{Kind: backend.CompileError,
			Msg: fmt.Sprintf("%s: no function named %q in the compiled library", src.Name, src.Entry),
			Log: fmt.Sprintf("%s: no function named %q; the library has: %s\n", src.Name, src.Entry, strings.Join(names, ", "))}
	}
	if fn.FunctionType() != metal.FunctionTypeKernel {
		fn.Release()
		return metal.FunctionObject{}, &backend.Failure{Kind: backend.CompileError,
			Msg: fmt.Sprintf("%s: %s is not a kernel function", src.Name, src.Entry)}
	}
	declared := fn.FunctionConstantsDictionary()
	if len(declared) == 0 {
		return fn, nil
	}
	defer fn.Release()
	values := metal.FunctionConstantValuesClass.Alloc().Init()
	defer values.Release()
	names := make([]string, 0, len(declared))
	for name := range declared {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v, ok := src.Constants[name]
		if !ok {
			continue // unset: Metal says so below if the kernel needs it
		}
		code, data, err := constantBytes(v)
		if err != nil {
			return metal.FunctionObject{}, &backend.Failure{Kind: backend.CompileError, Msg: fmt.Sprintf("%s: function constant %s: %v", src.Name, name, err)}
		}
		if want := declared[name].Type(); metal.DataType(code) != want {
			return metal.FunctionObject{}, &backend.Failure{Kind: backend.CompileError,
				Msg: fmt.Sprintf("%s: function constant %s is declared %s; the value given is a %s", src.Name, name, dataTypeName(uint(want)), v.Type)}
		}
		values.SetConstantValueTypeWithName(unsafe.Pointer(&data[0]), metal.DataType(code), name)
	}
	var nserr foundation.Error
	spec := lib.NewFunctionWithNameConstantValuesError(src.Entry, values, unsafe.Pointer(&nserr))
	if spec.IsNil() {
		return spec, compileFailure(src.Name, errorText(nserr, "Metal could not specialise "+src.Entry+" with its function constants"))
	}
	return spec, nil
}

// pipeline builds the compute pipeline for fn (+1). darwinkit's
// NewComputePipelineStateWithFunctionError wraps fn with
// objc.WrapAsProtocol, which panics for a concrete object, so the selector
// is sent directly.
func (g *gpu) pipeline(fn metal.FunctionObject, src backend.Source) (metal.ComputePipelineStateObject, error) {
	var nserr foundation.Error
	pso := objc.Call[metal.ComputePipelineStateObject](g.dev, objc.Sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(&nserr))
	if pso.IsNil() {
		f := compileFailure(src.Name, errorText(nserr, "Metal could not build a compute pipeline for "+src.Entry))
		f.Msg = "pipeline: " + f.Msg
		return pso, f
	}
	return pso, nil
}

// errorText is an NSError's localized description, or def for none. The
// error is autoreleased: call it inside the pool that produced it.
func errorText(e foundation.Error, def string) string {
	if e.IsNil() {
		return def
	}
	if s := e.LocalizedDescription(); s != "" {
		return s
	}
	return def
}

// A program is one compiled compute pipeline.
type program struct {
	g      *gpu
	kernel string

	mu     sync.RWMutex // Run holds it shared; Close exclusively
	pso    metal.ComputePipelineStateObject
	closed bool

	tgMem, maxThreads, simdWidth int
}

var _ backend.Program = (*program)(nil)

// ThreadgroupMemory is the pipeline's staticThreadgroupMemoryLength: what
// the Metal compiler allocated, not an estimate from the source.
func (p *program) ThreadgroupMemory() int { return p.tgMem }

// MaxThreadsPerThreadgroup is the pipeline's maxTotalThreadsPerThreadgroup,
// which can be lower than the device's limit for a kernel that uses many
// registers.
func (p *program) MaxThreadsPerThreadgroup() int { return p.maxThreads }

// ThreadExecutionWidth is the pipeline's SIMD-group width.
func (p *program) ThreadExecutionWidth() int { return p.simdWidth }

// Close releases the pipeline. A command buffer still running retains it.
func (p *program) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return inPool(func() error {
		p.pso.Release()
		return nil
	})
}

// Run copies d's device buffers into new shared-storage buffers, encodes
// d.Repeat dispatches of d's geometry in one compute encoder of one command
// buffer, commits it and waits for it (at most d.Timeout), then reads every
// device buffer back. Result.Total is one sample: that command buffer's
// GPUEndTime-GPUStartTime, all d.Repeat dispatches together (Times stays
// empty: dispatches of one command buffer are not timed apart). d.Order is
// validated but cannot be honoured: the GPU schedules threads itself.
func (p *program) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	pl, err := planDispatch(p.kernel, d, limits{
		maxThreads: p.maxThreads, maxDim: p.g.maxDim,
		staticTGMem: p.tgMem, maxTGMem: p.g.maxTGMem, maxBufferLen: p.g.maxBufferLen,
	})
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return nil, errors.New("run: program is closed")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var res *backend.Result
	err = inPool(func() error {
		bufs, err := p.g.buffers(pl.device)
		defer func() {
			for _, b := range bufs {
				b.Release() // a command buffer still running retains them
			}
		}()
		if err != nil {
			return fmt.Errorf("run %s: %w", p.kernel, err)
		}
		cb := p.g.queue.CommandBuffer()
		if cb.IsNil() {
			return fmt.Errorf("run %s: the command queue gave no command buffer", p.kernel)
		}
		if err := p.encode(cb, pl, bufs); err != nil {
			return fmt.Errorf("run %s: %w", p.kernel, err)
		}
		cb.Commit()
		if err := wait(ctx, cb, pl.timeout); err != nil {
			if errors.Is(err, errTimedOut) {
				return &backend.Failure{Kind: backend.Timeout,
					Msg: fmt.Sprintf("%s: the command buffer did not complete within %v (Metal cannot cancel it; it runs on until the GPU's watchdog stops it)", p.kernel, pl.timeout)}
			}
			return fmt.Errorf("run %s: %w", p.kernel, err)
		}
		if cb.Status() == metal.CommandBufferStatusError {
			return commandBufferFailure(p.kernel, cb)
		}
		res = &backend.Result{Outputs: readBack(bufs, pl.device)}
		if t, ok := gpuDuration(float64(cb.GPUStartTime()), float64(cb.GPUEndTime())); ok {
			res.Total = t
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// buffers creates a shared-storage buffer (+1) holding a copy of each
// device buffer's bytes; an empty one gets one byte, as Metal has no empty
// buffers. On error the buffers made so far are returned for release.
func (g *gpu) buffers(device []backend.Buffer) ([]metal.BufferObject, error) {
	out := make([]metal.BufferObject, 0, len(device))
	for _, b := range device {
		var buf metal.BufferObject
		if len(b.Data) == 0 {
			buf = g.dev.NewBufferWithLengthOptions(1, metal.ResourceStorageModeShared)
		} else {
			buf = g.dev.NewBufferWithBytesLengthOptions(unsafe.Pointer(&b.Data[0]), uint(len(b.Data)), metal.ResourceStorageModeShared)
		}
		if buf.IsNil() {
			return out, fmt.Errorf("cannot allocate %d bytes for buffer %d", len(b.Data), b.Index)
		}
		out = append(out, buf)
	}
	return out, nil
}

// encode records pl into cb: one compute encoder (serial dispatch, so each
// dispatch sees the previous one's writes), the pipeline, the buffers at
// their indices, the threadgroup memory lengths, pl.repeat dispatches.
// darwinkit's SetComputePipelineState and SetBufferOffsetAtIndex_ wrap
// their argument with objc.WrapAsProtocol, which panics, so those
// selectors are sent directly; the compute encoder type lacks the
// inherited endEncoding, which the command-encoder view has.
func (p *program) encode(cb metal.CommandBufferObject, pl *plan, bufs []metal.BufferObject) error {
	enc := cb.ComputeCommandEncoder()
	if enc.IsNil() {
		return errors.New("the command buffer gave no compute encoder")
	}
	objc.Call[objc.Void](enc, objc.Sel("setComputePipelineState:"), p.pso)
	for i, b := range pl.device {
		objc.Call[objc.Void](enc, objc.Sel("setBuffer:offset:atIndex:"), bufs[i], uint(0), uint(b.Index))
	}
	for _, t := range pl.tg {
		enc.SetThreadgroupMemoryLengthAtIndex(uint(t.length), uint(t.index))
	}
	if pl.launch {
		grid := metal.Size{Width: uint64(pl.grid.X), Height: uint64(pl.grid.Y), Depth: uint64(pl.grid.Z)}
		threads := metal.Size{Width: uint64(pl.threads.X), Height: uint64(pl.threads.Y), Depth: uint64(pl.threads.Z)}
		for range pl.repeat {
			enc.DispatchThreadgroupsThreadsPerThreadgroup(grid, threads)
		}
	}
	metal.CommandEncoderObject{Object: enc.Object}.EndEncoding()
	return nil
}

// wait waits for a committed command buffer to complete or fail.
func wait(ctx context.Context, cb metal.CommandBufferObject, timeout time.Duration) error {
	return waitFor(ctx, timeout, func() bool {
		s := cb.Status()
		return s == metal.CommandBufferStatusCompleted || s == metal.CommandBufferStatusError
	}, time.Sleep)
}

// commandBufferFailure describes a failed command buffer from its error.
func commandBufferFailure(kernel string, cb metal.CommandBufferObject) *backend.Failure {
	e := cb.Error()
	if e.IsNil() {
		return &backend.Failure{Kind: backend.Crash, Msg: kernel + ": the command buffer failed without an error"}
	}
	domain, code, desc := string(e.Domain()), e.Code(), e.LocalizedDescription()
	return &backend.Failure{Kind: cbFailureKind(domain, code),
		Msg: fmt.Sprintf("%s: command buffer error: %s", kernel, firstLine(desc)),
		Log: fmt.Sprintf("%s\n(%s code %d)\n", desc, domain, code)}
}

// readBack copies every device buffer's contents out of its Metal buffer.
func readBack(bufs []metal.BufferObject, device []backend.Buffer) map[int][]byte {
	out := make(map[int][]byte, len(device))
	for i, b := range device {
		data := make([]byte, len(b.Data))
		if len(data) > 0 {
			copy(data, unsafe.Slice((*byte)(bufs[i].Contents()), len(data)))
		}
		out[b.Index] = data
	}
	return out
}
