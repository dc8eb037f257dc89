package metal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"metalab/backend"
)

// Name is the backend's name in the registry and on the command line.
const Name = "metal"

// DefaultTimeout bounds one Run's command buffer when Dispatch.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// init registers the metal backend as "metal". On a machine where it
// cannot run, the registered backend says why (macOS only, or built
// without cgo) instead of being missing.
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

// planDispatch validates d for kernel under lim. A malformed request (an
// unknown thread order, a negative grid, an index outside Metal's argument
// table, a buffer bound twice) is a plain error, as on the cpu backend. A
// well-formed request the compiled pipeline or the device cannot launch (a
// threadgroup larger than the pipeline allows, more threadgroup memory than
// the device has) is a *backend.Failure of kind Crash: on a GPU it is a
// property of the variant, which the caller records like any other failure.
func planDispatch(kernel string, d backend.Dispatch, lim limits) (*plan, error) {
	switch d.Order.Kind {
	case "", "in-order", "reversed", "shuffle":
	default:
		return nil, fmt.Errorf("run %s: unknown thread order %q (want in-order, reversed or shuffle)", kernel, d.Order.Kind)
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
			Msg: fmt.Sprintf("%s: threadgroup %dx%dx%d (%d threads) exceeds the pipeline's maxTotalThreadsPerThreadgroup %d; Metal will not launch it", kernel, t.X, t.Y, t.Z, n, lim.maxThreads)}
	}
	for i, n := range [3]int{t.X, t.Y, t.Z} {
		if lim.maxDim[i] > 0 && n > lim.maxDim[i] {
			return nil, &backend.Failure{Kind: backend.Crash,
				Msg: fmt.Sprintf("%s: threadgroup %dx%dx%d exceeds the device's %dx%dx%d threads per threadgroup; Metal will not launch it", kernel, t.X, t.Y, t.Z, lim.maxDim[0], lim.maxDim[1], lim.maxDim[2])}
		}
	}
	if lim.maxTGMem > 0 && lim.staticTGMem+p.dynTG > lim.maxTGMem {
		return nil, &backend.Failure{Kind: backend.Crash,
			Msg: fmt.Sprintf("%s: threadgroup memory %d bytes (%d static + %d bound from the host) exceeds the device's %d; Metal will not launch it", kernel, lim.staticTGMem+p.dynTG, lim.staticTGMem, p.dynTG, lim.maxTGMem)}
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
	cbErrorDomain    = "MTLCommandBufferErrorDomain"
	cbErrorTimeout   = 2
	cbErrorPageFault = 3
)

// cbFailureKind classifies a failed command buffer by its NSError: the
// GPU's own watchdog is a Timeout, a GPU page fault (an access outside any
// mapped buffer) is a BadAccess, anything else a Crash.
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
