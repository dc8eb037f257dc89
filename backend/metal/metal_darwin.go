//go:build darwin && cgo

package metal

/*
#cgo CFLAGS: -x objective-c
#cgo LDFLAGS: -framework Metal -framework CoreGraphics -framework Foundation
#import <Metal/Metal.h>
#include <stdlib.h>
#include <string.h>

// metalab_default_device returns the system default Metal device or, where
// there is none (ssh sessions, some CI runners), the first of all devices;
// retained (+1, the file is not compiled with ARC). NULL means the machine
// has no Metal device. *how is 1 for MTLCreateSystemDefaultDevice, 2 for
// MTLCopyAllDevices; *count is how many devices MTLCopyAllDevices lists.
static void *metalab_default_device(int *how, unsigned long *count) {
	NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
	*count = all.count;
	*how = 1;
	id<MTLDevice> d = MTLCreateSystemDefaultDevice();
	if (d == nil && all.count > 0) {
		d = [[all objectAtIndex:0] retain];
		*how = 2;
	}
	[all release];
	return (void *)d;
}

// metalab_devinfo holds the device's figures. They are read here, in
// Objective-C, rather than through darwinkit: its BOOL getters hand libffi
// a one-byte return slot where libffi writes eight, and MTLSize (24 bytes)
// is returned through memory.
typedef struct {
	unsigned long long max_threads[3];
	unsigned long long max_tg_mem, max_buffer_len, working_set;
	int unified, low_power, removable, has_families;
	long long families[32];
	int nfamilies;
} metalab_devinfo;

static void metalab_device_info(void *dev, metalab_devinfo *out) {
	id<MTLDevice> d = (id<MTLDevice>)dev;
	memset(out, 0, sizeof *out);
	MTLSize s = d.maxThreadsPerThreadgroup;
	out->max_threads[0] = s.width;
	out->max_threads[1] = s.height;
	out->max_threads[2] = s.depth;
	out->max_tg_mem = d.maxThreadgroupMemoryLength;
	out->max_buffer_len = d.maxBufferLength;
	out->working_set = d.recommendedMaxWorkingSetSize;
	out->unified = d.hasUnifiedMemory ? 1 : 0;
	out->low_power = [d isLowPower] ? 1 : 0;
	out->removable = [d isRemovable] ? 1 : 0;
	// MTLGPUFamily values, newest first; supportsFamily: answers NO for a
	// value this macOS does not know.
	static const long long fams[] = {1010, 1009, 1008, 1007, 1006, 1005, 1004, 1003, 1002, 1001, 2002, 5002, 5001, 3003, 3002, 3001};
	if ([d respondsToSelector:@selector(supportsFamily:)]) {
		out->has_families = 1;
		for (unsigned i = 0; i < sizeof fams / sizeof fams[0]; i++) {
			if ([d supportsFamily:(MTLGPUFamily)fams[i]]) {
				out->families[out->nfamilies++] = fams[i];
			}
		}
	}
}

// metalab_command_buffer returns a new command buffer (autoreleased); with
// status set, it records each encoder's execution status for its error
// (MTLCommandBufferErrorOptionEncoderExecutionStatus, macOS 11).
static void *metalab_command_buffer(void *queue, int status) {
	id<MTLCommandQueue> q = (id<MTLCommandQueue>)queue;
	MTLCommandBufferDescriptor *desc = [[MTLCommandBufferDescriptor alloc] init];
	desc.errorOptions = status ? MTLCommandBufferErrorOptionEncoderExecutionStatus : MTLCommandBufferErrorOptionNone;
	id<MTLCommandBuffer> cb = [q commandBufferWithDescriptor:desc];
	[desc release];
	return (void *)cb;
}

// metalab_dispatch encodes repeat dispatchThreadgroups:threadsPerThreadgroup:
// calls. MTLSize goes by value here, compiled by clang, not through libffi.
static void metalab_dispatch(void *enc, unsigned long long gx, unsigned long long gy, unsigned long long gz,
                             unsigned long long tx, unsigned long long ty, unsigned long long tz, unsigned long long repeat) {
	id<MTLComputeCommandEncoder> e = (id<MTLComputeCommandEncoder>)enc;
	MTLSize g = MTLSizeMake(gx, gy, gz), t = MTLSizeMake(tx, ty, tz);
	for (unsigned long long i = 0; i < repeat; i++) {
		[e dispatchThreadgroups:g threadsPerThreadgroup:t];
	}
}

// metalab_encoder_states describes each encoder of a failed command buffer
// from its error's MTLCommandBufferEncoderInfoErrorKey, "label: state" a
// line; malloc'd (the caller frees it), NULL when the error has none.
static char *metalab_encoder_states(void *err) {
	NSError *e = (NSError *)err;
	NSArray *infos = e.userInfo[MTLCommandBufferEncoderInfoErrorKey];
	if (infos == nil || infos.count == 0) {
		return NULL;
	}
	NSMutableString *s = [NSMutableString string];
	for (id<MTLCommandBufferEncoderInfo> info in infos) {
		const char *state = "unknown";
		switch (info.errorState) {
		case MTLCommandEncoderErrorStateCompleted: state = "completed"; break;
		case MTLCommandEncoderErrorStateAffected: state = "affected"; break;
		case MTLCommandEncoderErrorStatePending: state = "pending"; break;
		case MTLCommandEncoderErrorStateFaulted: state = "faulted"; break;
		default: break;
		}
		[s appendFormat:@"%@: %s\n", info.label, state];
	}
	return strdup(s.UTF8String);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	res   *residency

	facts    deviceFacts
	mathMode bool // MTLCompileOptions has mathMode (macOS 15+)
}

// statusFlag is the status argument of metalab_command_buffer.
func (g *gpu) statusFlag() C.int {
	if g.facts.EncoderStatus {
		return 1
	}
	return 0
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
	var s stepper
	err := inPool(&s, func() error {
		s.at = "find the Metal device"
		var how C.int
		var count C.ulong
		dev := metal.DeviceObject{Object: objc.ObjectFrom(C.metalab_default_device(&how, &count))}
		if dev.IsNil() {
			return errors.New("metal backend: no Metal device (MTLCreateSystemDefaultDevice and MTLCopyAllDevices found none)")
		}
		s.at = "create the command queue"
		queue := dev.NewCommandQueue()
		if queue.IsNil() {
			dev.Release()
			return errors.New("metal backend: create the command queue: the Metal device gave none")
		}
		s.at = "read the device's limits"
		var info C.metalab_devinfo
		C.metalab_device_info(dev.Ptr(), &info)
		f := deviceFacts{
			Name:        dev.Name(),
			Found:       "MTLCreateSystemDefaultDevice",
			Devices:     int(count),
			Unified:     info.unified != 0,
			LowPower:    info.low_power != 0,
			Removable:   info.removable != 0,
			MaxThreads:  [3]int{int(info.max_threads[0]), int(info.max_threads[1]), int(info.max_threads[2])},
			MaxTGMem:    int(info.max_tg_mem),
			MaxBuffer:   int(info.max_buffer_len),
			WorkingSet:  int64(info.working_set),
			HasFamilies: info.has_families != 0,

			EncoderStatus: encoderStatus(os.Getenv),
		}
		if how == 2 {
			f.Found = "MTLCopyAllDevices (first of them; MTLCreateSystemDefaultDevice gave none)"
		}
		for i := 0; i < int(info.nfamilies); i++ {
			f.Families = append(f.Families, int(info.families[i]))
		}
		s.at = "read the compiler's defaults"
		opts := metal.CompileOptionsClass.Alloc().Init()
		defer opts.Release()
		f.Language = uint(opts.LanguageVersion())
		f.OS = foundation.ProcessInfo_ProcessInfo().OperatingSystemVersionString()
		g = &gpu{
			dev: dev, queue: queue, facts: f,
			mathMode: opts.RespondsToSelector(objc.Sel("setMathMode:")),
			res:      newResidency(keptBudget(f.WorkingSet)),
		}
		return nil
	})
	return g, err
}

// A stepper names the step a darwinkit call belongs to, for the error a
// panic inside it becomes.
type stepper struct{ at string }

// inPool runs f inside an autorelease pool (darwinkit returns most objects
// autoreleased, and Go threads have no pool of their own) and turns a
// darwinkit panic, such as "object is nil", into an environment error that
// names the step s was at.
func inPool(s *stepper, f func() error) (err error) {
	objc.WithAutoreleasePool(func() {
		defer func() {
			if r := recover(); r != nil {
				err = darwinkitFailure(s.at, r)
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
	device := ""
	if g, err := system(); err == nil {
		device = g.facts.short()
	}
	return backend.Info{Name: Name, Device: device, Clock: "gpu", Orders: false, Check: false,
		Timing: "Metal GPU time (GPUStartTime to GPUEndTime of one command buffer)"}
}

// Describe says how the device was found, its GPU families, its limits and
// the compiler settings, for `metalab backends`.
func (b *Backend) Describe() string {
	g, err := system()
	if err != nil {
		return ""
	}
	return g.facts.describe(g.mathMode)
}

// SelfTest compiles, dispatches and reads back a one-thread kernel with a
// function constant and threadgroup memory, and reports each step.
func (b *Backend) SelfTest(ctx context.Context) []Step {
	return selfTest(ctx, b)
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
	text, err := prepareSource(src)
	if err != nil {
		return nil, err
	}
	var p *program
	var s stepper
	err = inPool(&s, func() error {
		lib, err := g.library(&s, src, text)
		if err != nil {
			return err
		}
		defer lib.Release()
		fn, err := g.function(&s, lib, src)
		if err != nil {
			return err
		}
		defer fn.Release()
		pso, err := g.pipeline(&s, fn, src)
		if err != nil {
			return err
		}
		s.at = "read the pipeline's limits"
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
func (g *gpu) library(s *stepper, src backend.Source, text string) (metal.LibraryObject, error) {
	s.at = "set the compile options"
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
	s.at = "compile the library (newLibraryWithSource:options:error:)"
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
func (g *gpu) function(s *stepper, lib metal.LibraryObject, src backend.Source) (metal.FunctionObject, error) {
	s.at = "find the entry point (newFunctionWithName:)"
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
	s.at = "read the function constants (functionConstantsDictionary)"
	declared := fn.FunctionConstantsDictionary()
	if len(declared) == 0 {
		return fn, nil
	}
	defer fn.Release()
	s.at = "set the function constants"
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
	s.at = "specialise the entry point (newFunctionWithName:constantValues:error:)"
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
func (g *gpu) pipeline(s *stepper, fn metal.FunctionObject, src backend.Source) (metal.ComputePipelineStateObject, error) {
	s.at = "build the pipeline (newComputePipelineStateWithFunction:error:)"
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
	var s stepper
	s.at = "release the pipeline"
	return inPool(&s, func() error {
		p.pso.Release()
		return nil
	})
}

// Run validates d, then lets the process's residency run it (run.go):
// buffers kept on the GPU by Key are restored there in a command buffer of
// their own, d.Repeat dispatches are encoded in one compute encoder of the
// timed command buffer, and every device buffer not marked Discard is read
// back. Result.Total is that command buffer's GPUEndTime-GPUStartTime (Times
// stays empty: dispatches of one command buffer are not timed apart).
// d.Order is validated but cannot be honoured: the GPU schedules threads
// itself.
func (p *program) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	pl, err := planDispatch(p.kernel, d, limits{
		maxThreads: p.maxThreads, maxDim: p.g.facts.MaxThreads,
		staticTGMem: p.tgMem, maxTGMem: p.g.facts.MaxTGMem, maxBufferLen: p.g.facts.MaxBuffer,
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
	var s stepper
	err = inPool(&s, func() error {
		var err error
		res, _, err = p.g.res.run(ctx, &mtlDevice{g: p.g, pso: p.pso, s: &s}, p.kernel, pl)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// An mtlDevice is the device of run.go for one program's runs.
type mtlDevice struct {
	g   *gpu
	pso metal.ComputePipelineStateObject
	s   *stepper
}

// An mtlBuffer is a shared-storage MTLBuffer of n bytes (+1).
type mtlBuffer struct {
	b metal.BufferObject
	n int
}

func (m *mtlBuffer) bytes() []byte { return unsafe.Slice((*byte)(m.b.Contents()), m.n) }

// release drops this reference; a command buffer still running retains it.
func (m *mtlBuffer) release() { m.b.Release() }

func (d *mtlDevice) newBuffer(n int, step string) (devBuffer, error) {
	d.s.at = step
	b := d.g.dev.NewBufferWithLengthOptions(uint(n), metal.ResourceStorageModeShared)
	if b.IsNil() {
		return nil, fmt.Errorf("%s: the device gave no buffer", step)
	}
	return &mtlBuffer{b: b, n: n}, nil
}

// restore blits each kept copy into its run buffer, in a command buffer of
// its own, and waits for it: the timed command buffer starts after.
// copyFromBuffer:… has protocol parameters (darwinkit's method wraps them
// and panics), so the selector is sent directly.
func (d *mtlDevice) restore(ctx context.Context, copies []bufCopy, timeout time.Duration) (*completion, error) {
	d.s.at = "restore kept buffers: create the command buffer"
	cb := metal.CommandBufferObject{Object: objc.ObjectFrom(C.metalab_command_buffer(d.g.queue.Ptr(), d.g.statusFlag()))}
	if cb.IsNil() {
		return nil, errors.New("the command queue gave no command buffer")
	}
	d.s.at = "restore kept buffers: encode the copies"
	blit := cb.BlitCommandEncoder()
	if blit.IsNil() {
		return nil, errors.New("the command buffer gave no blit encoder")
	}
	metal.CommandEncoderObject{Object: blit.Object}.SetLabel("metalab restore kept buffers")
	for _, c := range copies {
		src, dst := c.src.(*mtlBuffer), c.dst.(*mtlBuffer)
		objc.Call[objc.Void](blit, objc.Sel("copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:"), src.b, uint(0), dst.b, uint(0), uint(c.n))
	}
	metal.CommandEncoderObject{Object: blit.Object}.EndEncoding()
	d.s.at = "restore kept buffers: commit and wait"
	cb.Commit()
	return d.complete(ctx, cb, timeout), nil
}

// dispatch encodes pl into one compute encoder (serial dispatch, so each
// dispatch sees the previous one's writes) of a command buffer that records
// each encoder's execution status, commits it and waits for it.
// darwinkit's SetComputePipelineState and SetBufferOffsetAtIndex_ wrap
// their argument with objc.WrapAsProtocol, which panics, so those
// selectors are sent directly; the dispatch itself is encoded in the cgo
// preamble; the compute encoder type lacks the inherited endEncoding,
// which the command-encoder view has.
func (d *mtlDevice) dispatch(ctx context.Context, kernel string, pl *plan, bufs []devBuffer) (*completion, error) {
	d.s.at = "create the command buffer"
	cb := metal.CommandBufferObject{Object: objc.ObjectFrom(C.metalab_command_buffer(d.g.queue.Ptr(), d.g.statusFlag()))}
	if cb.IsNil() {
		return nil, errors.New("create the command buffer: the command queue gave none")
	}
	d.s.at = "create the compute encoder"
	enc := cb.ComputeCommandEncoder()
	if enc.IsNil() {
		return nil, errors.New("create the compute encoder: the command buffer gave none")
	}
	view := metal.CommandEncoderObject{Object: enc.Object}
	view.SetLabel(encoderLabel(kernel, pl))
	d.s.at = "bind the pipeline and buffers"
	objc.Call[objc.Void](enc, objc.Sel("setComputePipelineState:"), d.pso)
	for i, b := range pl.device {
		objc.Call[objc.Void](enc, objc.Sel("setBuffer:offset:atIndex:"), bufs[i].(*mtlBuffer).b, uint(0), uint(b.Index))
	}
	for _, t := range pl.tg {
		enc.SetThreadgroupMemoryLengthAtIndex(uint(t.length), uint(t.index))
	}
	d.s.at = "encode the dispatches"
	if pl.launch {
		C.metalab_dispatch(enc.Ptr(),
			C.ulonglong(pl.grid.X), C.ulonglong(pl.grid.Y), C.ulonglong(pl.grid.Z),
			C.ulonglong(pl.threads.X), C.ulonglong(pl.threads.Y), C.ulonglong(pl.threads.Z), C.ulonglong(pl.repeat))
	}
	view.EndEncoding()
	d.s.at = "commit and wait"
	cb.Commit()
	return d.complete(ctx, cb, pl.timeout), nil
}

// complete waits for a committed command buffer (polling its status, so
// the wait honours the timeout and ctx) and reports what became of it.
// Once the status says it ended, waitUntilCompleted returns at once; Apple
// documents GPUStartTime and GPUEndTime as 0 until the command buffer
// finishes and readable after waitUntilCompleted returns, so they are read
// after it.
func (d *mtlDevice) complete(ctx context.Context, cb metal.CommandBufferObject, timeout time.Duration) *completion {
	start := time.Now()
	err := waitFor(ctx, timeout, func() bool {
		s := cb.Status()
		return s == metal.CommandBufferStatusCompleted || s == metal.CommandBufferStatusError
	}, time.Sleep)
	if err != nil {
		c := &completion{Running: true, Waited: time.Since(start)}
		if !errors.Is(err, errTimedOut) {
			c.Interrupted = err
		}
		return c
	}
	d.s.at = "wait for the command buffer (waitUntilCompleted)"
	cb.WaitUntilCompleted()
	d.s.at = "read the GPU timestamps"
	c := &completion{Start: float64(cb.GPUStartTime()), End: float64(cb.GPUEndTime())}
	if cb.Status() != metal.CommandBufferStatusError {
		return c
	}
	c.Failed = true
	d.s.at = "read the command buffer's error"
	e := cb.Error()
	if e.IsNil() {
		c.Desc = "the command buffer failed without an error"
		return c
	}
	c.Domain, c.Code, c.Desc = string(e.Domain()), e.Code(), e.LocalizedDescription()
	if cs := C.metalab_encoder_states(e.Ptr()); cs != nil {
		c.Encoders = C.GoString(cs)
		C.free(unsafe.Pointer(cs))
	}
	return c
}
