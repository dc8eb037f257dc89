// Package metal is the backend that compiles and runs kernels with Metal
// itself, on a Mac, through github.com/progrium/darwinkit (v0.5.0): no
// translation, and the figures are the ones Metal reports.
//
// It is built on darwin with cgo (metal_darwin.go). Everywhere else, and on
// a Mac built with CGO_ENABLED=0, the registered "metal" backend is a
// stand-in whose Available says why it cannot run ("metal backend: macOS
// only"), so `metalab backends` lists it either way. Usable answers the
// same question for `--backend auto`.
//
// # Building on a Mac
//
// darwinkit is Objective-C behind cgo, so a build needs the Xcode command
// line tools (clang and the macOS SDK's framework headers) and cgo on, which
// is Go's default when clang is found:
//
//	xcode-select --install            # once
//	CGO_ENABLED=1 go build ./cmd/metalab
//	go test ./backend/metal           # runs kernels on the GPU
//	./metalab backends                # metal: yes once its self-test passes
//
// The README's Mac section says what to run next and what to send back
// when something fails.
//
// Go 1.26 needs macOS 12 or later. Kernels are compiled at run time by the
// OS's Metal compiler, so the MSL language version is the OS's default
// (`metalab backends` prints it) and the results belong to that macOS.
//
// # Device
//
// The device is MTLCreateSystemDefaultDevice(), or the first of
// MTLCopyAllDevices() where that returns nil (ssh sessions, some CI
// runners): darwinkit binds neither, so a few lines of cgo do. One device
// and one command queue serve the whole process, one Run at a time.
// `metalab backends` says which of the two found the device, its GPU
// families (supportsFamily:, newest Apple family first), its threadgroup
// and buffer limits, and runs a self-test: a one-thread kernel with a
// function constant and threadgroup memory is compiled, dispatched twice
// (the second time from a kept buffer), and its output and GPU timestamps
// read; each step is listed, and metal is available only once all pass.
//
// # Compile
//
// Compile hands the source to newLibraryWithSource:options:error: with:
//
//   - fast math off: mathMode = MTLMathModeSafe and mathFloatingPointFunctions
//     = Precise where the OS has them (macOS 15), else fastMathEnabled = NO.
//     Apple documents safe mode only as disabling unsafe floating-point
//     optimisations; whether it also stops fused multiply-add contraction is
//     not documented, so bitwise parity with another backend is not promised.
//   - Source.Defines as preprocessorMacros (an empty value means 1, as -DNAME).
//   - #include "x" inlined: the Metal compiler has no include path, so each
//     include that resolves (against the including file's directory, then
//     Source.Dir, then each of Source.IncludeDirs, a spec's includes:) is
//     inlined between #line directives, and a #pragma once header is
//     wrapped in an include guard. Diagnostics keep the user's file names
//     and line numbers; "program_source" (Metal's name for the main file)
//     is replaced by Source.Name. An include that does not resolve is left
//     for the Metal compiler to report. As on the cpu backend, headers are
//     read only from Source.Dir and Source.IncludeDirs: an absolute
//     include, or one whose file lies outside them (a ../ escape, a
//     symbolic link out), is a Failure of kind Refused.
//   - Source.Check is refused as Unavailable: there is no checking mode.
//
// The entry point (a kernel's name or [[host_name]]) is then specialised,
// if it declares function constants, with Source.Constants by name
// (newFunctionWithName:constantValues:error:): a value whose type differs
// from the declaration is a CompileError; a constant the function does not
// use is ignored, as on the cpu backend; one left unset is Metal's to judge.
// Finally newComputePipelineStateWithFunction:error: builds the pipeline.
// Anything Metal rejects is a *backend.Failure of kind CompileError whose
// Msg is the first error line and whose Log is the compiler's whole output.
//
// A Program reports the pipeline's own figures: ThreadgroupMemory is
// staticThreadgroupMemoryLength (what check compares against the limit),
// MaxThreadsPerThreadgroup is maxTotalThreadsPerThreadgroup (lower than the
// device's limit for a kernel that needs many registers), and
// ThreadExecutionWidth is the SIMD-group width.
//
// # Run
//
// Each device buffer of a Run gets an MTLResourceStorageModeShared buffer
// of its length: the last run's, when it had one of that length, else a
// new one. A buffer bound with a backend.Buffer.Key is restored from a copy
// kept on the device under that key (kept the first time the key is bound,
// or again when its length changes), by a blit in a command buffer of its
// own that completes before the timed one is encoded; every other buffer's
// bytes are copied in from the host. Kept copies are evicted, least
// recently used first, past a quarter of the device's
// recommendedMaxWorkingSetSize. The restore gives the bytes of Data, never
// what the last run wrote. Each buffer is bound at its [[buffer(n)]] index,
// each host-sized [[threadgroup(n)]] length set (rounded up to Metal's 16
// bytes), and Dispatch.Repeat dispatchThreadgroups:threadsPerThreadgroup:
// calls with the spec's geometry are encoded in one compute encoder,
// labelled with the kernel and geometry, of one command buffer that records
// each encoder's execution status (MTLCommandBufferErrorOptionEncoderExecutionStatus;
// Apple notes it can cost some CPU time, the same for baseline and variant:
// METALAB_METAL_ENCODER_STATUS=0 turns it off, and `metalab backends`
// says which). The encoder dispatches serially: each
// dispatch sees the previous one's writes. After the command buffer
// completes, every device buffer not marked Discard is read back into
// Result.Outputs.
//
// A well-formed request the pipeline or device cannot launch (a threadgroup
// over maxTotalThreadsPerThreadgroup or the device's per-dimension limit,
// static plus host-sized threadgroup memory over
// maxThreadgroupMemoryLength) is refused before encoding with a Failure of
// kind Crash. Metal checks these limits only with its API validation layer
// (MTL_DEBUG_LAYER=1), which then stops the process with an assertion;
// without it the dispatch is not checked and what it does is undefined
// (typically nothing: the outputs keep their sentinel).
//
// A command buffer that ends in error (a GPU page fault, the GPU's
// watchdog, "Impacting Interactivity" on a Mac driving a display, a
// submission macOS ignores "for causing prior/excessive GPU errors"), or
// that is still running when the Run's timeout passes, is a
// *backend.EnvError, not the variant's Failure: after a GPU fault macOS may
// refuse the process's later command buffers, and work committed after an
// unfinished one waits behind it, so whatever ran next would be charged
// with it. The error names the kernel, Metal's error and code, each
// encoder's state (completed, affected, faulted, ...), and from then on
// every Run of the process returns it: the run stops with what finished.
// Rerunning the variant alone with MTL_DEBUG_LAYER=1 and
// MTL_SHADER_VALIDATION=1 in the environment has Metal name the access.
//
// # What the time measures
//
// Result.Total is one sample per Run (Result.Times stays empty, as on the
// cuda backend): the command buffer's GPUEndTime minus its GPUStartTime,
// the span during which the GPU executed it. That covers all Repeat
// dispatches together, with whatever the GPU does between them, and nothing
// on the host: buffer uploads and restores (their own command buffer),
// encoding, commit, scheduling latency and the wait are outside it. The
// per-dispatch figure is the sample divided by Repeat; a larger Repeat
// amortises the command buffer's fixed start-up cost. Both timestamps are
// seconds in the host time base (mach_absolute_time), as Metal gives them.
// Apple documents them as 0.0 until the command buffer finishes, to be read
// after waitUntilCompleted returns or in a completion handler: the Run
// polls the status (so that its timeout and context are honoured), then
// calls waitUntilCompleted, which returns at once, then reads them. A
// completed command buffer without usable timestamps is an EnvError, never
// a zero sample.
//
// # What Metal cannot do here
//
// Thread orders: Dispatch.Order is validated and ignored; the GPU schedules
// threads itself, so the race probe's orders are the cpu backend's alone.
//
// Timeouts: Dispatch.Timeout (default DefaultTimeout) bounds the wait, but
// Metal cannot cancel a committed command buffer. Run returns the
// environment error above; the command buffer runs on until it finishes or
// the GPU's watchdog stops it, holding its buffers and pipeline (command
// buffers retain what they use).
//
// # darwinkit, as used here
//
// darwinkit v0.5.0 is generated from Apple's headers and has traps this
// package avoids; TestNoProtocolWrapCalls and TestTypeCheckDarwin keep it so:
//
//   - Generated methods whose parameter is a protocol object
//     (SetComputePipelineState, SetBufferOffsetAtIndex_,
//     NewComputePipelineStateWithFunctionError, ...) wrap the argument with
//     objc.WrapAsProtocol, which panics for the concrete types darwinkit
//     hands out. Those selectors are sent with objc.Call.
//   - ComputeCommandEncoderObject lacks the inherited endEncoding: the
//     command-encoder view (metal.CommandEncoderObject) has it.
//   - mathMode, mathFloatingPointFunctions and MTLDataTypeBFloat postdate
//     darwinkit's enums: raw selectors and values, guarded by
//     respondsToSelector:.
//   - objc.Call[T] gives libffi a return slot of T's size, and libffi
//     writes a whole ffi_arg (8 bytes) for any integral return narrower
//     than that (ffi_call(3)): every generated BOOL getter
//     (HasUnifiedMemory, SupportsFamily, IsLowPower, ...) writes past its
//     variable. The device's figures are read in the cgo preamble instead
//     (metalab_device_info), and TestNoNarrowReturnCalls keeps it so.
//   - MTLSize arguments (24 bytes, passed through memory on arm64) would go
//     through darwinkit's reflective libffi struct path, which it never
//     exercises for compute: dispatchThreadgroups:threadsPerThreadgroup:
//     is sent from the cgo preamble too, compiled by clang. So are the
//     command buffer with encoder execution status and the encoder states
//     of a failed one.
//   - A darwinkit panic ("object is nil", ...) becomes an EnvError that
//     names the step it happened in ("metal backend: build the pipeline
//     (newComputePipelineStateWithFunction:error:): darwinkit call
//     failed: object is nil").
//   - new… results (library, function, pipeline, buffers, queue) are owned
//     and released here; everything autoreleased (command buffers, encoders,
//     NSStrings, NSErrors) is used inside objc.WithAutoreleasePool, and a
//     darwinkit panic inside the pool becomes an error.
//
// # Checked without a Mac
//
// No Mac is available where this package is developed, so:
//
//   - TestTypeCheckDarwin type-checks the package as it builds for
//     darwin/arm64 with cgo (package internal/darwincheck: go list for the
//     file selection, go/types with FakeImportC), with its Mac-only tests and
//     darwinkit's objc, macos/metal and macos/foundation, bodies included.
//   - TestNoProtocolWrapCalls resolves every darwinkit function and method the
//     package refers to and fails if its body calls objc.WrapAsProtocol;
//     TestNoNarrowReturnCalls, if it (or the package itself) makes an
//     objc.Call with a return narrower than 8 bytes.
//   - TestDarwinkitConstants checks the raw Metal enum values used here
//     against darwinkit's.
//   - The platform-independent parts run in tests everywhere, the Metal
//     device replaced by a fake (run.go's device interface): include search
//     and refusal, line mapping, compile-log rewriting, dispatch and order
//     validation, function-constant encoding, the residency of kept
//     buffers (upload, restore, eviction, Discard), what a failed or
//     unfinished command buffer becomes, timing conversion, polling, the
//     self-test's steps and the detail line.
//
// Not verified without a Mac: anything at run time — the cgo preamble
// (C.name calls are not type-checked, the Objective-C is not compiled), that Metal accepts these calls and
// argument encodings through libffi, the compiler's log format, safe math's
// exact effect, GPU timestamps, the watchdog's error codes — and whether
// the Mac-only tests (metal_darwin_test.go) pass. Run `go test
// ./backend/metal` on a Mac first.
package metal
