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
//	./metalab backends                # metal: yes, with the device
//	./metalab check kernels/qsa_prompt.yaml --backend metal --cases quick
//	go test ./backend/metal           # runs kernels on the GPU
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
// and one command queue serve the whole process.
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
//     Source.Dir) is inlined between #line directives, and a #pragma once
//     header is wrapped in an include guard. Diagnostics keep the user's
//     file names and line numbers; "program_source" (Metal's name for the
//     main file) is replaced by Source.Name. An include that does not
//     resolve is left for the Metal compiler to report.
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
// Each Run copies every device buffer's bytes (spec inputs, and outputs
// already filled with their sentinel) into a new MTLResourceStorageModeShared
// buffer, binds it at its [[buffer(n)]] index, sets each host-sized
// [[threadgroup(n)]] length (rounded up to Metal's 16 bytes), and encodes
// Dispatch.Repeat dispatchThreadgroups:threadsPerThreadgroup: calls with the
// spec's geometry in one compute encoder of one command buffer. The encoder
// dispatches serially: each dispatch sees the previous one's writes. After
// the command buffer completes, every device buffer is read back into
// Result.Outputs.
//
// A well-formed request the pipeline or device cannot launch (a threadgroup
// over maxTotalThreadsPerThreadgroup or the device's per-dimension limit,
// static plus host-sized threadgroup memory over
// maxThreadgroupMemoryLength) is refused before encoding with a Failure of
// kind Crash, since Metal would abort the process instead. A command buffer
// that ends in error is a Failure with Metal's message: Timeout for the
// GPU's watchdog, BadAccess for a GPU page fault, Crash otherwise.
//
// # What the time measures
//
// Result.Times holds one sample per Run: the command buffer's GPUEndTime
// minus its GPUStartTime, the span during which the GPU executed it. That
// covers all Repeat dispatches together, with whatever the GPU does between
// them, and nothing on the host: buffer creation and copies, encoding,
// commit, scheduling latency and the wait are outside it. The per-dispatch
// figure is the sample divided by Repeat; a larger Repeat amortises the
// command buffer's fixed start-up cost. Both timestamps are seconds in the
// host time base (mach_absolute_time), as Metal gives them. If Metal gives
// no timestamps, Times is empty rather than zero.
//
// # What Metal cannot do here
//
// Thread orders: Dispatch.Order is validated and ignored; the GPU schedules
// threads itself, so the race probe's orders are the cpu backend's alone.
//
// Timeouts: Dispatch.Timeout (default DefaultTimeout) bounds the wait, but
// Metal cannot cancel a committed command buffer. Run returns a Timeout
// failure; the command buffer runs on until it finishes or the GPU's
// watchdog stops it, holding its buffers and pipeline (command buffers
// retain what they use), and later work on the queue waits behind it.
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
//     package refers to and fails if its body calls objc.WrapAsProtocol.
//   - TestDarwinkitConstants checks the raw Metal enum values used here
//     against darwinkit's.
//   - The platform-independent parts (include inlining and line mapping,
//     compile-log rewriting, dispatch validation, function-constant
//     encoding, timing conversion, polling) run in tests everywhere.
//
// Not verified without a Mac: anything at run time — the cgo preamble
// (C.name calls are not type-checked), that Metal accepts these calls and
// argument encodings through libffi, the compiler's log format, safe math's
// exact effect, GPU timestamps, the watchdog's error codes — and whether
// the Mac-only tests (metal_darwin_test.go) pass. Run `go test
// ./backend/metal` on a Mac first.
package metal
