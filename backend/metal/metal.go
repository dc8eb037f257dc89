package metal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"metalab/backend"
)

// Name is the backend's name in the registry and on the command line.
const Name = "metal"

// DefaultTimeout bounds one Run's command buffer when Dispatch.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// init registers the metal backend as "metal" in package backend's
// package-level registry, for the callers that have not moved to package
// all (metalab/backend/all). On a machine where it cannot run, the
// backend says why (macOS only, or built without cgo) instead of being
// missing.
func init() {
	backend.Register(Name, func() backend.Backend { return New() })
}

var _ backend.Backend = (*Backend)(nil)

// Usable reports whether the metal backend can compile and run kernels on
// this machine, and why not. It is what `--backend auto` asks before it
// prefers metal over the cpu backend; on a Mac it looks for a Metal device
// (once per process).
func Usable(ctx context.Context) (ok bool, why string) {
	return New().Available(ctx)
}

// Metal's argument tables: [[buffer(n)]] and [[threadgroup(n)]] indices run
// from 0 to 30.
const maxArgIndex = 30

// tgAlign is the granularity of threadgroup memory lengths set from the
// host: Metal requires setThreadgroupMemoryLength:atIndex: lengths to be
// multiples of 16 bytes.
const tgAlign = 16

// A limits holds what the pipeline and the device allow a dispatch.
type limits struct {
	maxThreads   int    // the pipeline's maxTotalThreadsPerThreadgroup
	maxDim       [3]int // the device's maxThreadsPerThreadgroup, per dimension; 0 means unchecked
	staticTGMem  int    // the pipeline's staticThreadgroupMemoryLength
	maxTGMem     int    // the device's maxThreadgroupMemoryLength; 0 means unchecked
	maxBufferLen int    // the device's maxBufferLength; 0 means unchecked
}

// A tgArg is host-sized threadgroup memory bound at [[threadgroup(index)]].
type tgArg struct {
	index  int
	length int // rounded up to tgAlign
}

// A plan is a Dispatch validated against the pipeline and the device,
// ready to encode.
type plan struct {
	device  []backend.Buffer // device buffers, in Dispatch order
	tg      []tgArg
	dynTG   int // total host-sized threadgroup memory, rounded lengths
	grid    backend.Dim3
	threads backend.Dim3
	launch  bool // the grid has threadgroups; Metal refuses an empty dispatch
	repeat  int
	timeout time.Duration
}

// planDispatch validates d for kernel under lim. A malformed request (a
// thread order not in backend.OrderKinds, a negative grid, an index outside Metal's argument
// table, a buffer bound twice) is a plain error, as on the cpu backend. A
// well-formed request the compiled pipeline or the device cannot launch (a
// threadgroup larger than the pipeline allows, more threadgroup memory than
// the device has) is a *backend.Failure of kind Crash: on a GPU it is a
// property of the variant, which the caller records like any other failure.
// It must be refused here: Metal checks these limits only with its API
// validation layer on (MTL_DEBUG_LAYER=1), which then stops the process;
// without it such a dispatch is not checked, and what it does (typically
// nothing, leaving the outputs as they were) is not defined.
func planDispatch(kernel string, d backend.Dispatch, lim limits) (*plan, error) {
	if d.Order.Kind != "" && !slices.Contains(backend.OrderKinds, d.Order.Kind) {
		return nil, fmt.Errorf("run %s: unknown thread order %q (want one of %s)", kernel, d.Order.Kind, strings.Join(backend.OrderKinds, ", "))
	}
	g, t := d.Threadgroups, d.Threads
	if g.X < 0 || g.Y < 0 || g.Z < 0 {
		return nil, fmt.Errorf("run %s: negative grid %dx%dx%d", kernel, g.X, g.Y, g.Z)
	}
	if t.X <= 0 || t.Y <= 0 || t.Z <= 0 {
		return nil, fmt.Errorf("run %s: threadgroup %dx%dx%d, want at least 1 thread in each dimension", kernel, t.X, t.Y, t.Z)
	}
	p := &plan{grid: g, threads: t, launch: g.Count() > 0, repeat: max(d.Repeat, 1), timeout: d.Timeout}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	seen := map[[2]int]bool{}
	for _, b := range d.Buffers {
		kind := "buffer"
		if b.Threadgroup {
			kind = "threadgroup"
		}
		if b.Index < 0 || b.Index > maxArgIndex {
			return nil, fmt.Errorf("run %s: %s index %d outside Metal's 0..%d", kernel, kind, b.Index, maxArgIndex)
		}
		key := [2]int{b.Index, 0}
		if b.Threadgroup {
			key[1] = 1
		}
		if seen[key] {
			return nil, fmt.Errorf("run %s: %s index %d bound twice", kernel, kind, b.Index)
		}
		seen[key] = true
		if b.Threadgroup {
			if b.Size < 0 {
				return nil, fmt.Errorf("run %s: threadgroup memory at index %d has negative size %d", kernel, b.Index, b.Size)
			}
			n := roundTG(b.Size)
			p.tg = append(p.tg, tgArg{index: b.Index, length: n})
			p.dynTG += n
			continue
		}
		if lim.maxBufferLen > 0 && len(b.Data) > lim.maxBufferLen {
			return nil, fmt.Errorf("run %s: buffer %d is %d bytes; this device's largest buffer is %d bytes", kernel, b.Index, len(b.Data), lim.maxBufferLen)
		}
		p.device = append(p.device, b)
	}
	if n := t.Count(); n > lim.maxThreads {
		return nil, &backend.Failure{Kind: backend.Crash,
			Msg: fmt.Sprintf("%s: threadgroup %dx%dx%d (%d threads) exceeds the pipeline's maxTotalThreadsPerThreadgroup %d; Metal does not run it", kernel, t.X, t.Y, t.Z, n, lim.maxThreads)}
	}
	for i, n := range [3]int{t.X, t.Y, t.Z} {
		if lim.maxDim[i] > 0 && n > lim.maxDim[i] {
			return nil, &backend.Failure{Kind: backend.Crash,
				Msg: fmt.Sprintf("%s: threadgroup %dx%dx%d exceeds the device's %dx%dx%d threads per threadgroup; Metal does not run it", kernel, t.X, t.Y, t.Z, lim.maxDim[0], lim.maxDim[1], lim.maxDim[2])}
		}
	}
	if lim.maxTGMem > 0 && lim.staticTGMem+p.dynTG > lim.maxTGMem {
		return nil, &backend.Failure{Kind: backend.Crash,
			Msg: fmt.Sprintf("%s: threadgroup memory %d bytes (%d static + %d bound from the host) exceeds the device's %d; Metal does not run it", kernel, lim.staticTGMem+p.dynTG, lim.staticTGMem, p.dynTG, lim.maxTGMem)}
	}
	return p, nil
}

// roundTG rounds a host-sized threadgroup memory length up to Metal's
// 16-byte granularity, and to at least 16 bytes.
func roundTG(n int) int {
	if n <= 0 {
		return tgAlign
	}
	return (n + tgAlign - 1) / tgAlign * tgAlign
}

// gpuDuration converts a command buffer's GPUStartTime and GPUEndTime
// (seconds, host time base) to a duration. It reports false when Metal gave
// no times (both zero) or nonsensical ones, so no made-up sample is
// recorded.
func gpuDuration(start, end float64) (time.Duration, bool) {
	if start <= 0 || end < start {
		return 0, false
	}
	return time.Duration((end-start)*1e9 + 0.5), true
}

// errTimedOut is returned by waitFor when the deadline passes first.
var errTimedOut = errors.New("timed out")

// waitFor polls done until it reports true, ctx ends or timeout passes,
// sleeping between polls: 10µs at first, doubling up to 1ms. Polling
// (rather than waitUntilCompleted) lets a Run honour its timeout and its
// context; it delays only the host's return, never the GPU's timestamps.
func waitFor(ctx context.Context, timeout time.Duration, done func() bool, sleep func(time.Duration)) error {
	deadline := time.Now().Add(timeout)
	nap := 10 * time.Microsecond
	for !done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !time.Now().Before(deadline) {
			return errTimedOut
		}
		sleep(nap)
		nap = min(2*nap, time.Millisecond)
	}
	return nil
}

// Metal's MTLCommandBufferError codes that name a kernel fault, in
// MTLCommandBufferErrorDomain (see the darwinkit constants
// metal.CommandBufferErrorTimeout and metal.CommandBufferErrorPageFault).
const (
	cbErrorDomain          = "MTLCommandBufferErrorDomain"
	cbErrorInternal        = 1
	cbErrorTimeout         = 2
	cbErrorPageFault       = 3
	cbErrorIgnored         = 4 // MTLCommandBufferErrorAccessRevoked (formerly Blacklisted): "Ignored (for causing prior/excessive GPU errors)"
	cbErrorOutOfMemory     = 8
	cbErrorInvalidResource = 9
	cbErrorDeviceRemoved   = 11
	cbErrorStackOverflow   = 12
)

// cbFailureKind names what a failed command buffer's NSError says, in the
// words of backend.FailureKind: the GPU's own watchdog is a timeout, a GPU
// page fault (an access outside any mapped buffer) a bad-access, anything
// else a crash. It is part of the message of the environment error that
// stops the run (completionError), never a variant's result.
func cbFailureKind(domain string, code int) backend.FailureKind {
	if domain == cbErrorDomain {
		switch code {
		case cbErrorTimeout:
			return backend.Timeout
		case cbErrorPageFault:
			return backend.BadAccess
		}
	}
	return backend.Crash
}

// firstLine returns s's first non-empty line, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// keptBudget is how many bytes of kept buffer copies the residency holds:
// a quarter of the device's recommendedMaxWorkingSetSize, as the cuda
// backend keeps a quarter of the GPU's memory; 1 GiB when Metal gives none.
func keptBudget(workingSet int64) int {
	if workingSet <= 0 {
		return 1 << 30
	}
	return int(workingSet / 4)
}

// darwinkitFailure is the error a darwinkit panic (a nil object, a
// conversion it does not support) becomes: the step it happened in, as an
// environment error, since it says nothing about the kernel.
func darwinkitFailure(step string, r any) error {
	if step == "" {
		step = "a darwinkit call"
	}
	return &backend.EnvError{Op: "metal backend: " + step, Err: fmt.Errorf("darwinkit call failed: %v", r)}
}

// prepareSource is the first half of Compile, before Metal is called: a
// source built for the checking mode is refused as Unavailable (the metal
// backend has none), and the text Metal compiles is src's with its
// includes inlined (librarySource). What it refuses is a *backend.Failure:
// Refused for an include outside the include directories, CompileError for
// a source Metal cannot be given.
func prepareSource(src backend.Source) (string, error) {
	if src.Check {
		return "", errNoCheck()
	}
	text, err := librarySource(src)
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) {
			return "", f
		}
		return "", &backend.Failure{Kind: backend.CompileError, Msg: err.Error(), Log: err.Error()}
	}
	return text, nil
}

// errNoCheck is Compile's answer to Source.Check: the metal backend has no
// checking mode.
func errNoCheck() error {
	return &backend.Failure{Kind: backend.Unavailable,
		Msg: "metal backend: no checking mode (Source.Check); the cpu backend checks kernels (--backend cpu)"}
}

// encoderLabel names a run's compute encoder, which Metal reports in a
// failed command buffer's encoder states.
func encoderLabel(kernel string, pl *plan) string {
	return fmt.Sprintf("metalab %s: %d dispatch(es) of %dx%dx%d threadgroups of %dx%dx%d", kernel, pl.repeat,
		pl.grid.X, pl.grid.Y, pl.grid.Z, pl.threads.X, pl.threads.Y, pl.threads.Z)
}

// deviceFacts are what `metalab backends` says about the Metal device.
type deviceFacts struct {
	Name        string
	Found       string // how: "MTLCreateSystemDefaultDevice", or the MTLCopyAllDevices fallback
	Devices     int    // how many MTLCopyAllDevices lists
	Unified     bool
	LowPower    bool
	Removable   bool
	HasFamilies bool  // the device answers supportsFamily:
	Families    []int // MTLGPUFamily values it supports, newest first
	MaxThreads  [3]int
	MaxTGMem    int
	MaxBuffer   int
	WorkingSet  int64
	Language    uint // the default MTLLanguageVersion
	OS          string
	// EncoderStatus: command buffers record each encoder's execution
	// status, which a failed one's error then lists (encoderStatus).
	EncoderStatus bool
}

// encoderStatus reports whether command buffers record each encoder's
// execution status: yes unless METALAB_METAL_ENCODER_STATUS=0. Apple notes
// that the option can cost some CPU time (and, the header says, GPU time
// or memory on some platforms); it costs baseline and variant alike, and
// without it a fault cannot be tied to an encoder.
func encoderStatus(getenv func(string) string) bool {
	return getenv("METALAB_METAL_ENCODER_STATUS") != "0"
}

// gpuFamilyNames names MTLGPUFamily values (Metal/MTLDevice.h; darwinkit
// v0.5.0 stops at Apple7).
var gpuFamilyNames = map[int]string{
	1001: "Apple1", 1002: "Apple2", 1003: "Apple3", 1004: "Apple4", 1005: "Apple5", 1006: "Apple6",
	1007: "Apple7", 1008: "Apple8", 1009: "Apple9", 1010: "Apple10",
	2002: "Mac2", 3001: "Common1", 3002: "Common2", 3003: "Common3", 5001: "Metal3", 5002: "Metal4",
}

// families lists the supported GPU families, "Apple9 Mac2 Metal3 Common3"
// style: the newest Apple family, then the others.
func (f deviceFacts) families() string {
	if !f.HasFamilies {
		return "unknown (no supportsFamily:)"
	}
	var apple string
	var rest []string
	for _, v := range f.Families {
		name := gpuFamilyNames[v]
		if name == "" {
			name = fmt.Sprintf("MTLGPUFamily(%d)", v)
		}
		if v > 1000 && v < 2000 {
			if apple == "" {
				apple = name
			}
			continue
		}
		rest = append(rest, name)
	}
	out := rest
	if apple != "" {
		out = append([]string{apple}, rest...)
	}
	if len(out) == 0 {
		return "none known"
	}
	return strings.Join(out, " ")
}

// short names the device for reports (backend.Info.Device): its name, GPU
// family and the macOS it runs.
func (f deviceFacts) short() string {
	return fmt.Sprintf("%s (GPU family %s; %s)", f.Name, f.families(), f.OS)
}

// describe is the detail line of `metalab backends`.
func (f deviceFacts) describe(mathMode bool) string {
	mem := "discrete memory"
	if f.Unified {
		mem = "unified memory"
	}
	math := "fastMathEnabled=NO (macOS before 15)"
	if mathMode {
		math = "mathMode=safe, precise math functions"
	}
	found := f.Found
	if f.Devices != 1 {
		found += fmt.Sprintf(", %d devices listed", f.Devices)
	}
	status := "encoder execution status recorded"
	if !f.EncoderStatus {
		status = "encoder execution status off (METALAB_METAL_ENCODER_STATUS=0)"
	}
	return fmt.Sprintf("%s (%s; found by %s); GPU family %s; threadgroup up to %dx%dx%d threads (the pipeline may allow fewer), %d B threadgroup memory; buffers up to %d B, working set %d B (kept buffer copies up to %d B); %s; %s; default MSL %d.%d; %s",
		f.Name, mem, found, f.families(), f.MaxThreads[0], f.MaxThreads[1], f.MaxThreads[2], f.MaxTGMem,
		f.MaxBuffer, f.WorkingSet, keptBudget(f.WorkingSet), math, status, f.Language>>16, f.Language&0xffff, f.OS)
}
