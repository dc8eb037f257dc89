// Package backend defines how metalab compiles and runs Metal compute kernels,
// whatever executes them: the cpu emulator, an NVIDIA GPU, or Metal itself.
//
// A Backend compiles a Source into a Program; a Program runs Dispatches over
// Buffers. Everything that can go wrong with a kernel (it does not compile, it
// crashes, it hangs, it reads out of bounds) is a *Failure value carrying its
// log, so callers record it as a result about that kernel instead of treating
// it as a tool error.
package backend

import (
	"context"
	"fmt"
	"time"
)

// A Source is one kernel to compile.
type Source struct {
	Name      string            // file name used in diagnostics, e.g. "kernels/qsa_prompt.metal"
	Text      []byte            // the Metal source
	Dir       string            // directory for resolving #include "..."; "" means none allowed
	Entry     string            // kernel function or host_name to run
	Defines   map[string]string // preprocessor defines (-D NAME=VALUE)
	Constants map[string]Value  // function-constant values, by name
}

// A Value is a typed scalar for function constants: Type is a Metal scalar type
// ("bool", "int", "uint", "float", "half", "short", "ushort", ...) and
// Bits holds its value as a little-endian bit pattern of that type's size.
type Value struct {
	Type string
	Bits uint64
}

// A Backend turns sources into runnable programs.
type Backend interface {
	// Name is the backend's short name: "cpu", "cuda", "metal".
	Name() string
	// Available reports whether the backend can run here, and why not.
	Available(ctx context.Context) (ok bool, why string)
	// Compile compiles src. A kernel that fails to compile yields a
	// *Failure of kind CompileError, not a tool error.
	Compile(ctx context.Context, src Source) (Program, error)
}

// A Program is a compiled kernel entry point.
type Program interface {
	// ThreadgroupMemory is the static threadgroup memory in bytes the
	// compiled program allocates.
	ThreadgroupMemory() int
	// MaxThreadsPerThreadgroup is the largest threadgroup the program can run.
	MaxThreadsPerThreadgroup() int
	// Run binds buffers and dispatches d.Repeat times.
	Run(ctx context.Context, d Dispatch) (*Result, error)
	// Close releases the program.
	Close() error
}

// A Buffer is one kernel argument: a device/constant buffer bound at Index,
// or host-sized threadgroup memory when Threadgroup is set.
type Buffer struct {
	Index       int
	Data        []byte // initial contents; for threadgroup memory, nil and Size used
	Size        int    // threadgroup memory length (Threadgroup only)
	Threadgroup bool
	Output      bool // read back after the run
}

// A Dim3 is a grid or threadgroup size.
type Dim3 struct{ X, Y, Z int }

// Count returns X*Y*Z.
func (d Dim3) Count() int { return d.X * d.Y * d.Z }

// Order is the order in which a threadgroup's threads run between two
// barriers. Only the cpu backend honours it; others run in hardware order.
type Order struct {
	Kind string // "in-order", "reversed", "shuffle"
	Seed uint64 // for "shuffle"
}

func (o Order) String() string {
	if o.Kind == "shuffle" {
		return fmt.Sprintf("shuffle(%d)", o.Seed)
	}
	if o.Kind == "" {
		return "in-order"
	}
	return o.Kind
}

// A Dispatch is one run request.
type Dispatch struct {
	Buffers      []Buffer
	Threadgroups Dim3 // threadgroups per grid
	Threads      Dim3 // threads per threadgroup
	Repeat       int  // dispatches; 0 means 1
	Order        Order
	// Timeout bounds the whole run: all Repeat dispatches together, not
	// each one. Past it the run is a Failure of kind Timeout. 0 means the
	// backend default.
	Timeout time.Duration
}

// A Result holds the outputs of a run.
type Result struct {
	Outputs map[int][]byte  // by buffer index, for buffers marked Output (and all device buffers)
	Times   []time.Duration // per dispatch, where the backend can measure it; raw samples
}

// FailureKind classifies a kernel failure.
type FailureKind string

const (
	CompileError FailureKind = "compile-error"
	Crash        FailureKind = "crash"
	Timeout      FailureKind = "timeout"
	BadAccess    FailureKind = "bad-access"
	Deadlock     FailureKind = "deadlock"
	Unavailable  FailureKind = "unavailable"
)

// A Failure is something a kernel did wrong, with its log.
type Failure struct {
	Kind FailureKind
	Msg  string // one line
	Log  string // compiler output, runner stderr, ...
}

func (f *Failure) Error() string { return string(f.Kind) + ": " + f.Msg }
