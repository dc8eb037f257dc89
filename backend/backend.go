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
	Name string // file name used in diagnostics, e.g. "kernels/qsa_prompt.metal"
	Text []byte // the Metal source
	Dir  string // directory for resolving #include "..."; "" means none allowed
	// IncludeDirs are searched for #include "..." after the including
	// file's directory and Dir (a spec's includes:, the -I of the
	// commands); headers are read only from Dir and these.
	IncludeDirs []string
	Entry       string            // kernel function or host_name to run
	Defines     map[string]string // preprocessor defines (-D NAME=VALUE)
	Constants   map[string]Value  // function-constant values, by name
	// MaxThreads is the most threads per threadgroup the program will be
	// dispatched with, when the caller knows it (0: not known). A backend
	// whose largest threadgroup depends on how it compiles compiles for
	// at least that many: cuda, where the registers nvcc spends per thread
	// bound a block's threads, as the source's
	// [[max_total_threads_per_threadgroup]] does where it is declared.
	// It changes nothing else.
	MaxThreads int
	// Check builds the program for the checking mode: every access to
	// device and threadgroup memory is checked for bounds, uninitialised
	// threadgroup reads and races, and Result.Findings reports what was
	// seen. A backend that cannot check returns a Failure of kind
	// Unavailable.
	Check bool
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
	// Info describes what the backend runs on and what its runs mean. It
	// may start the backend (a runner, a device); call it after Available.
	Info(ctx context.Context) Info
}

// An Info describes a backend on this machine.
type Info struct {
	Name   string `json:"name"`
	Device string `json:"device"` // "host CPU, 2 workers", "NVIDIA H200", "Apple M5 (10-core GPU)"
	// Clock is where Result.Total comes from: "gpu" (device timestamps or
	// events) or "host" (the runner's or host's clock).
	Clock string `json:"clock"`
	// Orders reports whether Dispatch.Order is honoured. A backend that
	// runs threads in hardware order cannot run the race probe.
	Orders bool `json:"orders"`
	// Check reports whether the checking mode (Source.Check) is available.
	Check bool `json:"check"`
	// Timing says what a timing on this backend is, for reports: "cpu
	// emulator time: it exercises the loop, it is not a GPU claim".
	Timing string `json:"timing"`
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
	// Discard says the caller does not need the buffer's bytes after the
	// run (a timing sample): the backend need not read it back, and
	// Result.Outputs may lack it.
	Discard bool
	// Key, when set, promises that Data holds the same bytes in every run
	// that binds a buffer with this Key: a backend may keep a copy on the
	// device and restore the buffer from it instead of uploading Data
	// again. The restore gives the bytes of Data, never what the last run
	// wrote. The cuda backend keeps copies; the others upload every time.
	Key string
}

// A Dim3 is a grid or threadgroup size.
type Dim3 struct{ X, Y, Z int }

// Count returns X*Y*Z.
func (d Dim3) Count() int { return d.X * d.Y * d.Z }

// Order is the order in which a threadgroup's threads run between two
// barriers. Only the cpu backend honours it; others run in hardware order.
//
// The thread orders run every runnable thread once per step: "in-order"
// (by thread index), "reversed", "shuffle" (a seeded permutation, new each
// step). The simd-group orders run one simd group at a time, each until it
// waits at a threadgroup barrier, while the others lag: "simd-ahead" (lowest
// simd group first), "simd-reversed" (highest first), "simd-shuffle" (a
// seeded permutation of simd groups per threadgroup).
type Order struct {
	Kind string // see above; "" means "in-order"
	Seed uint64 // for "shuffle" and "simd-shuffle"
}

// OrderKinds lists the valid Order kinds.
var OrderKinds = []string{"in-order", "reversed", "shuffle", "simd-ahead", "simd-reversed", "simd-shuffle"}

func (o Order) String() string {
	if o.Kind == "shuffle" || o.Kind == "simd-shuffle" {
		return fmt.Sprintf("%s(%d)", o.Kind, o.Seed)
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
	Outputs map[int][]byte  // by buffer index: every device buffer (those marked Discard may be left out)
	Times   []time.Duration // per dispatch, where the backend can time dispatches one by one; raw samples
	// Total is the time of all Repeat dispatches together, submitted
	// together where the backend can (one command buffer on a GPU), by the
	// clock Info names: one timing sample.
	Total time.Duration
	// Findings are what the checking mode saw (programs compiled with
	// Source.Check): races, uninitialised reads and warnings. A bounds
	// violation stops the run: it comes back as a Failure of kind BadAccess
	// whose Findings hold it.
	Findings []Finding
}

// A FindingKind classifies a Finding.
type FindingKind string

// Finding kinds. Race, Uninit and Bounds make a kernel unsafe on a GPU;
// Lockstep and DivergentBarrier are warnings: real hardware runs such code
// (lanes of a simd group do execute together, and Apple GPUs let returned
// threads count at a barrier) but Metal does not promise it.
const (
	FindRace      FindingKind = "race"              // two simd groups (or threadgroups) touch a byte in one interval, one writes
	FindUninit    FindingKind = "uninit"            // threadgroup memory read before any thread of the threadgroup wrote it
	FindBounds    FindingKind = "bounds"            // an access outside its buffer or array
	FindLockstep  FindingKind = "lockstep"          // as a race, but two lanes of one simd group with no simd synchronisation between
	FindDivergent FindingKind = "divergent-barrier" // some threads returned before a threadgroup barrier the others waited at
	// The three kinds below name findings real kernels live with; each is
	// a race or an uninitialised read the checking mode tells apart.
	//
	// FindMemNone: a race whose two accesses are ordered only by a
	// threadgroup_barrier whose mem_flags do not include the memory's
	// (mem_flags::mem_none: an execution barrier).
	FindMemNone FindingKind = "mem-none-order"
	// FindSameValue: two simd groups (or threadgroups) write one location
	// in one interval, the later with the bytes the earlier wrote.
	FindSameValue FindingKind = "same-value-write"
	// FindUnwrittenUnused: an uninitialised threadgroup read whose value
	// reaches no output: the bytes are the same with threadgroup memory
	// poisoned two ways (the plain build's 0xff, the checking build's
	// 0x5a). Check gives this kind; the runner reports FindUninit.
	FindUnwrittenUnused FindingKind = "unwritten-unused"
)

// IsWarning reports whether findings of kind k are warnings rather than
// failures.
func (k FindingKind) IsWarning() bool { return k == FindLockstep || k == FindDivergent }

// A Finding is one thing the checking mode saw, with the two accesses
// involved (Other only for races and lockstep conflicts).
type Finding struct {
	Kind  FindingKind `json:"kind"`
	Fatal bool        `json:"fatal,omitempty"` // the run stopped here
	// Space is "device", "threadgroup" (a static declaration),
	// "threadgroup-host" ([[threadgroup(n)]] memory), "thread" or "".
	Space string `json:"space,omitempty"`
	// Buffer is the device buffer index, threadgroup slot id or
	// [[threadgroup(n)]] index; -1 when unknown.
	Buffer int `json:"buffer"`
	// Array names the threadgroup or thread array ("partial", or for a
	// thread array its type, "float [8]").
	Array string `json:"array,omitempty"`
	// Offset is the byte offset of the first byte concerned from the start
	// of the buffer or array (negative or past the end for bounds); for an
	// array index out of bounds it is the index.
	Offset int64   `json:"offset"`
	Size   int     `json:"size,omitempty"`   // bytes accessed
	Coords []int   `json:"coords,omitempty"` // element coordinates in a threadgroup array, when known
	Count  int     `json:"count"`            // occurrences with the same kind, place and source lines
	Access Access  `json:"access"`
	Other  *Access `json:"other,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// An Access is one side of a Finding: which thread did what, where.
type Access struct {
	Write bool `json:"write"`
	// Either is set when the access could be a read or a write: an array
	// subscript is checked before the access, whichever it is.
	Either    bool   `json:"either,omitempty"`
	Atomic    bool   `json:"atomic,omitempty"`
	Group     [3]int `json:"threadgroup"`
	Thread    int    `json:"thread"` // index in the threadgroup
	SIMDGroup int    `json:"simdgroup"`
	Lane      int    `json:"lane"`
	File      string `json:"file,omitempty"` // the .metal source position, when known
	Line      int    `json:"line,omitempty"`
	Col       int    `json:"col,omitempty"`
}

// Where formats the access's thread, e.g. "threadgroup (0,1,0) thread 35
// (simdgroup 1, lane 3)".
func (a Access) Where() string {
	return fmt.Sprintf("threadgroup (%d,%d,%d) thread %d (simdgroup %d, lane %d)", a.Group[0], a.Group[1], a.Group[2], a.Thread, a.SIMDGroup, a.Lane)
}

// Pos formats the access's source position, "file:line" or "?".
func (a Access) Pos() string {
	if a.Line <= 0 {
		return "?"
	}
	if a.Col > 0 {
		return fmt.Sprintf("%s:%d:%d", a.File, a.Line, a.Col)
	}
	return fmt.Sprintf("%s:%d", a.File, a.Line)
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
	// Sandbox: the kernel tried what the sandbox forbids (a system call, or
	// writing to the runner's reply channel).
	Sandbox FailureKind = "sandbox"
	// CompileTimeout: compiling the kernel took longer than the compile
	// time limit (a result about the variant, e.g. a chain of constexpr
	// loops, not a fault of the tools).
	CompileTimeout FailureKind = "compile-timeout"
	// Refused: the source contains what a Metal kernel cannot (inline
	// assembly, calls into the C library, includes of host files, ...), so
	// the backend would not compile it. Msg is the first refusal, Log all.
	Refused FailureKind = "refused"
)

// A CompileLimiter is a Backend whose compiles have a time limit that
// the caller may set: a compile that runs past d is a CompileTimeout
// failure; 0 restores the backend's default.
type CompileLimiter interface {
	SetCompileTimeout(d time.Duration)
}

// An ObjectProgram is a Program that names its compiled object by its
// content. Two programs of one backend with the same ObjectKey run the
// same machine code (the compile cache gave them one object: on the cuda
// backend, variants whose translations differ only in comments, blank
// lines or indentation), so a caller may take one's verdict and timings
// for the other's instead of measuring it again.
type ObjectProgram interface {
	ObjectKey() string
}

// A RunnerCounter is a Backend whose programs run in runner processes it
// starts: it says how many it started and how long the starts took
// together (each a process's start-up, on a GPU a context's). A sweep
// reports them: runners started again and again mean programs taking
// turns for too few runners.
type RunnerCounter interface {
	RunnerStarts() (n int64, took time.Duration)
	// RunnerRequests is what the runners' requests cost so far, by kind
	// of request, summed over every runner the backend started: where a
	// sweep's time on the backend went between the kernels' own time.
	RunnerRequests() []RequestStat
}

// A RequestStat is one kind of runner request (load, buffer, dispatch,
// read, reset, hello) and what its calls cost together: their wall time
// as metalab waited for the replies, and the bytes sent and received.
type RequestStat struct {
	Request  string  `json:"request"`
	Calls    int64   `json:"calls"`
	Seconds  float64 `json:"seconds"`
	Sent     int64   `json:"sent_bytes"`
	Received int64   `json:"received_bytes"`
}

// RequestsSince returns the counts of stats past those of before (an earlier
// RunnerRequests), dropping the request types with no new calls.
func RequestsSince(stats, before []RequestStat) []RequestStat {
	var out []RequestStat
	for _, s := range stats {
		for _, b := range before {
			if b.Request == s.Request {
				s.Calls -= b.Calls
				s.Seconds -= b.Seconds
				s.Sent -= b.Sent
				s.Received -= b.Received
			}
		}
		if s.Calls > 0 {
			out = append(out, s)
		}
	}
	return out
}

// AddRequests returns the counts of a and b added, by request type, in
// a's order then b's.
func AddRequests(a, b []RequestStat) []RequestStat {
	out := append([]RequestStat(nil), a...)
	for _, s := range b {
		found := false
		for i := range out {
			if out[i].Request == s.Request {
				out[i].Calls += s.Calls
				out[i].Seconds += s.Seconds
				out[i].Sent += s.Sent
				out[i].Received += s.Received
				found = true
			}
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}

// A Yielder is a Backend whose compiles and runs can yield the host's
// cores to others (a lower scheduling priority): Yield affects what it
// starts after it.
type Yielder interface {
	Yield()
}

// A ProgramKeeper is a Backend that keeps a bounded number of programs
// ready to run (a runner process each, on a GPU a context): KeepPrograms
// says n programs will run again soon, so at least n are kept.
type ProgramKeeper interface {
	KeepPrograms(n int)
}

// A BothCompiler is a Backend that compiles one source for the plain and
// the checking mode together faster than two Compiles (the cpu backend
// translates once and runs the two builds at once).
type BothCompiler interface {
	// CompileBoth compiles src (whatever src.Check says) for the plain
	// and for the checking mode; each program, or its error, is what
	// Compile would return for that mode.
	CompileBoth(ctx context.Context, src Source) (plain, checking Program, plainErr, checkErr error)
}

// CompileBoth compiles src for the plain and the checking mode on b, at
// once where b is a BothCompiler, else with two Compiles in series. A
// caller that needs both programs of one source (the checking mode's
// verdict and the plain build's run) should ask for them here.
func CompileBoth(ctx context.Context, b Backend, src Source) (plain, checking Program, plainErr, checkErr error) {
	if bc, ok := b.(BothCompiler); ok {
		return bc.CompileBoth(ctx, src)
	}
	src.Check = false
	plain, plainErr = b.Compile(ctx, src)
	src.Check = true
	checking, checkErr = b.Compile(ctx, src)
	return plain, checking, plainErr, checkErr
}

// A Failure is something a kernel did wrong, with its log.
type Failure struct {
	Kind     FailureKind
	Msg      string    // one line
	Log      string    // compiler output, runner stderr, ...
	Findings []Finding // for a run stopped by the checking mode: what it saw
}

// An EnvError is a fault of the machine metalab runs on — no compiler, a
// full disk, an unwritable cache — rather than of a kernel: it is never a
// variant's result.
type EnvError struct {
	Op  string
	Err error
}

func (e *EnvError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *EnvError) Unwrap() error { return e.Err }

func (f *Failure) Error() string { return string(f.Kind) + ": " + f.Msg }
