// Package cuda is the backend that runs Metal kernels on an NVIDIA GPU.
//
// A kernel is translated to one CUDA translation unit (TranslateCUDA:
// package translate with the CUDA target, translate/cuda, after the C++
// compiler's preprocessor, Options.CXX), compiled by nvcc into a shared
// object against the cpu backend's metal_stdlib prelude and run by the
// cuda runner: a child process, built with nvcc on first use from
// runtime/runner.cpp, that speaks the cpu runner's framed protocol
// (package runner). Every compiled program (every variant) has a runner
// process of its own, which loads that program's kernel object and no
// other (the runner refuses a second): nothing one kernel does to its
// process (its memory, the CUDA context, the kept copies) reaches another
// kernel's results. Compiles of one object and kernel (the same machine
// code: a variant's stage its edits do not reach, whose translation is
// the baseline's) share one program and its runner. At most eight
// (Options.Runners, METALAB_CUDA_RUNNERS) are kept running, the least recently used
// program's stopped and started again when it next runs; a program's
// runner is started while nvcc compiles it, never while another kernel is
// being timed, so its CUDA context's start-up is not paid after the
// compile and does not share the GPU with a timed run. The runner, the
// installed headers and every compiled
// kernel are cached by content hash under <cache>/cuda (the cpu backend's
// cache root), each object checked against the sha256 recorded when it was
// built. Build and BuildCU compile without a GPU (nvcc alone), for tests
// and for machines that only compile.
//
// # The ABI a translated TU targets
//
// runtime/mtl_cuda.h describes it in full; in short:
//
//   - The TU includes <metal_stdlib>, then mtl_cuda.h. The prelude is the
//     cpu backend's, compiled as device code: runtime/mtl_rt.h (found
//     first on the include path) supplies mtl_rt for the GPU and makes the
//     prelude's functions __host__ __device__ (see the prelude's README).
//   - The kernel source sits between MTL_CUDA_BEGIN_SOURCE and
//     MTL_CUDA_END_SOURCE (namespace metal::mtl_src, so that Metal's names
//     win over CUDA's global float4, fmax, ...; metal's functions of the
//     names the source declares are brought in first, so the source's
//     overloads join them as in Metal). Its functions are MTL_DEVICE, its
//     namespace-scope constants MTL_CONSTANT (but constexpr scalars), each
//     threadgroup declaration MTL_THREADGROUP(T, name) (__shared__ storage
//     of its own). The kernel has the cpu target's run function, MTL_ENTRY
//     void mtl_run_<kernel>(void* const* buffers, void* const* tgbufs),
//     reading thread attributes from mtl_rt::ctx().
//   - MTL_CUDA_KERNEL(0, ...) defines the extern "C" __global__ entry
//     (one LaunchArgs parameter: the buffers and the offsets of the
//     [[threadgroup(n)]] buffers in dynamic shared memory) and its host
//     stubs, with __launch_bounds__ where the kernel declares
//     [[max_total_threads_per_threadgroup]], or else where its program is
//     dispatched with more than 256 threads per threadgroup
//     (backend.Source.MaxThreads: check and run pass the largest of the
//     cases), so that nvcc spends no more registers per thread than a
//     block of that size allows (MLX's 1024-thread block kernels do not
//     launch otherwise); the one-entry table, with the
//     slot table of the static threadgroup declarations, is exported with
//     MTL_CUDA_EXPORT as mtl_cuda_kernels, next to mtl_cuda_abi.
//
// What the CUDA target cannot translate, and why: a static constexpr data
// member of class type (MLX's Limits<half>::min: half is a class in the
// prelude) that device code binds a reference to (a conditional's lvalue,
// a const& argument) has no device copy, and CUDA allows no memory space
// on a static data member, so nvcc calls it undefined in device code; a
// source that reopens namespace metal to specialise metal's templates
// reopens metal::mtl_src::metal instead; a function of the source with the
// exact signature of a non-template function of metal_stdlib conflicts
// with the using-declaration that brings metal's overloads in (Metal only
// refuses the ambiguous call).
//
// # Threadgroup memory
//
// Program.ThreadgroupMemory is the kernel's static threadgroup memory
// counted by Metal's rule (its declarations in msl's layout order, each
// aligned, the total rounded up to 16 bytes), from the TU's slot table and
// the compiler's sizes: the figure the cpu backend reports and msl
// estimates, so check's threadgroup-memory figures and --tg-limit mean the
// same on every backend. What the GPU allocates, nvcc's static shared
// memory (cudaFuncGetAttributes' sharedSizeBytes), is StaticSharedMemory,
// also in Resources: it lies between the declarations' sizes and Metal's
// total (nvcc packs the declarations its own way, does not round up, and
// drops storage the kernel never touches). sm_90 objects place a kernel's
// shared memory after a 1 KiB region the system reserves and count it in
// their .nv.shared section (cuobjdump's figure); ptxas -v leaves it out.
// For a hand-written TU whose table does not list every declaration,
// ThreadgroupMemory is nvcc's figure.
//
// # Thread positions, simd groups, barriers
//
// A Metal threadgroup is a CUDA block, a grid of threadgroups a CUDA grid.
// mtl_rt::ctx() computes Metal's attributes from threadIdx, blockIdx,
// blockDim and gridDim: thread_index_in_threadgroup is x + y*X + z*X*Y, the
// simd group index/32, the lane index%32. CUDA numbers a block's threads
// into warps by the same linear index, so simd group s is warp s for every
// block shape, and a block whose size is not a multiple of 32 ends in a
// partial warp exactly as its last simd group is partial on the cpu
// backend. threadgroup_barrier is __syncthreads(), simdgroup_barrier
// __syncwarp() over the warp's lanes.
//
// # Simd-group functions and bitwise agreement with the cpu backend
//
// The prelude builds every simd_* and quad_* function on one collective,
// simd_exchange, and folds the gathered values in lane order. On the GPU
// simd_exchange gathers with __shfl_sync, one 32-bit word per shuffle,
// from the lanes of __activemask(), so simd_sum, the scans, shuffles,
// ballots and simdgroup_matrix products compute the same operations in the
// same order as on the cpu backend and give the same bits: for kernels
// without transcendental functions the two backends' outputs are byte for
// byte equal (TestParity checks it for parity.inc's kernels, and
// TestGPUParityBundled for every bundled kernel, stage by stage, on its
// quick cases, on a GPU machine). The price is speed: a reduction is 32
// shuffles and a sequential fold, not a 5-step butterfly, so simd-heavy
// kernels are slower than hand-written CUDA, for the baseline and its
// variants alike.
//
// Where the backends differ, and why:
//
//   - Transcendental functions (exp, log, sin, pow, tanh, erf, ...) are
//     CUDA's libdevice on the GPU and the host's libm on the cpu backend;
//     both are within a few ulp of the true value, rarely the same one.
//     Of the bundled kernels, those that call exp may differ (qsa_flash,
//     qsa_attn_part, qsa_merge, the softmaxes of ggml, MLX and the trust
//     set, candle's exp, MFA's attention; the parity test lists each with
//     its reason and bounds the difference). Correctly rounded operations
//     agree: + - * /, sqrt, fma, conversions,
//     floor, ceil, rint, fmod, frexp, ldexp, the half and bfloat roundings.
//   - NaN payloads: an invalid operation makes 0x7fffffff on NVIDIA GPUs and
//     0xffc00000 on x86, so an output holding a NaN that arithmetic made
//     differs in its bits (a NaN copied from the input does not).
//   - Float to integer conversion out of range (or of a NaN) saturates on
//     the GPU and gives 0x80000000 on x86; both are undefined in Metal.
//   - Signed integer overflow: the cpu backend compiles with -fwrapv; nvcc
//     has no such flag, so device code that overflows a signed integer is
//     undefined C++ (in practice it wraps).
//   - Threadgroup memory is not poisoned on the GPU: a kernel that reads
//     what no thread wrote reads what an earlier block left.
//   - Collectives in divergent control flow: the participating lanes are
//     the converged ones (__activemask). The GPU's independent thread
//     scheduling may split lanes that the cpu backend keeps together; Metal
//     leaves such code undefined.
//
// # Timing
//
// A Run launches the kernel Repeat times on one stream between two CUDA
// events; Result.Total is their elapsed time, the GPU's clock, and
// Result.Times stays empty. Kernels are compiled with --fmad=false (no
// contraction of a*b+c into an FMA, as the source rounds), IEEE division
// and square root, and subnormals kept.
//
// A timing sample must be GPU time, not transfers: a full qsa case moves
// tens of megabytes, more than its kernels take to run. So the runner
// keeps a device copy of every buffer bound with a backend.Buffer.Key and
// restores it there (a device-to-device copy, outside the events) the
// next time the key is bound, instead of receiving the bytes again; it
// reads back no buffer marked Discard; and its device allocations outlive
// a run, so a sample pays no cudaMalloc. Kept copies are evicted, least
// recently used first, past a quarter of the GPU's memory shared among the
// runners kept at once (metalab then sends the bytes again); each program's
// runner keeps its own, so a variant's first run uploads its inputs once. Measured on an H200 with qsa_flash's full case
// at pos0=8192, 3 dispatches per sample: the kernels are 96 % of a 9-pair
// control's wall time, where re-sending the buffers left them 14 % (at 1
// dispatch per sample).
//
// # Failures
//
// A kernel that faults (an illegal address, a trap, a hardware error)
// leaves the CUDA context unusable: the runner reports it on stderr and
// exits, metalab restarts it, and the run is a Failure of kind BadAccess
// (illegal or misaligned address), Timeout (the GPU's watchdog, or the
// Dispatch's timeout, after which the runner is killed) or Crash. Each
// device buffer has 256 canary bytes before and after it; a run that
// changed them is a BadAccess that names the buffer and the offset. An
// out-of-bounds access further away is caught only when it leaves mapped
// memory. A launch the GPU refuses (too many threads for the kernel's
// registers, too much threadgroup memory) is a Crash whose message says
// "launch refused". There is no checking mode (Source.Check is Unavailable)
// and no thread order (Dispatch.Order is validated and ignored); the
// runner is not sandboxed, since the CUDA driver needs what the cpu
// runner's sandbox forbids.
//
// # Race check
//
// With Options.Racecheck (METALAB_CUDA_RACECHECK=1 for the registered
// backend) the runner runs under compute-sanitizer --tool racecheck and
// kernels are compiled with -lineinfo. Each race it reports becomes a
// Finding of kind race in threadgroup memory, with the two accesses'
// source lines (the .metal lines, through the TU's #line directives) and
// the hazard count. Its limits: racecheck sees shared memory only (not
// device memory); its analysis names accesses, not threads; it makes
// kernels many times slower (raise Dispatch.Timeout, and do not read its
// times); a hazard between lanes of one warp is reported like any other.
package cuda
