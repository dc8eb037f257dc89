// mtl_cuda.h — the contract between a translated CUDA translation unit and
// the cuda runner: how a TU declares threadgroup memory, defines its entry
// points and exports its kernel table.
//
// A TU has this shape (what the translator's CUDA target, translate/cuda,
// emits; translate/testdata/golden/*.txtar hold examples in their want.cu
// sections). Next to the cpu target's TU the differences are: the
// namespace around the source, the MTL_DEVICE / MTL_CONSTANT / MTL_ENTRY
// marks, MTL_THREADGROUP where the cpu target binds a reference to
// mtl_rt::tg_slot(id) (which does not exist here), the __global__ entry and
// the table's entries and export:
//
//   #include <metal_stdlib>            // the prelude, through mtl_rt.h (cuda)
//   #include "mtl_cuda.h"              // this file: ends the prelude's layer
//   MTL_CUDA_BEGIN_SOURCE              // the kernel source lives in metal::mtl_src
//   using ::metal::simd_shuffle_down;  // metal's overloads of names the source declares
//   ... the .metal text: every function it defines marked MTL_DEVICE,
//   ... namespace-scope constant data MTL_CONSTANT, each threadgroup
//   ... declaration as MTL_THREADGROUP(mtl_tg0_t, partial), its type
//   ... aliased before the function: typedef float mtl_tg0_t[64];
//   MTL_ENTRY void mtl_run_reduce(void* const* mtl_b, void* const* mtl_tg) {
//     const ::mtl_rt::ThreadCtx& mtl_c = ::mtl_rt::ctx();
//     ::metal::mtl_src::reduce(static_cast<const float*>(mtl_b[0]), ...);  // as on the cpu
//   }
//   MTL_ENTRY void mtl_entry_run(void* const* mtl_b, void* const* mtl_tg) {
//     ::metal::mtl_src::mtl_run_reduce(mtl_b, mtl_tg);   // <template arguments> here
//   }
//   static const ::mtl_rt::TGSlot mtl_slots[] = {...};   // as on the cpu, sizeof(mtl_tg0_t)
//   static const ::mtl_rt::BufferParam mtl_bufs[] = {...};
//   MTL_CUDA_END_SOURCE
//   MTL_CUDA_KERNEL(0, ::metal::mtl_src::mtl_entry_run)   // the __global__ mtl_entry_0
//   static const ::mtl_rt::KernelInfo mtl_kernel_table[] = {
//     MTL_CUDA_KERNEL_INFO_LAID_OUT(0, "reduce", 1, ::metal::mtl_src::mtl_slots,
//                                   2, ::metal::mtl_src::mtl_bufs, 1024),
//   };
//   MTL_CUDA_EXPORT(mtl_kernel_table)
//
// The instantiation of a template kernel and the slot aliases are named
// inside the source's namespace, where the template arguments mean what
// they mean in the source (float4 is metal's, not CUDA's).
//
// and is compiled with
//
//   nvcc -std=c++17 -O3 --fmad=false --ftz=false --prec-div=true
//        --prec-sqrt=true --expt-relaxed-constexpr
//        -Werror cross-execution-space-call -shared -Xcompiler -fPIC
//        -cudart shared -arch=sm_XY [-lineinfo, for racecheck]
//        -I backend/cuda/runtime -I backend/cpu/prelude tu.cu -o tu.so
//
// (backend/cuda's KernelFlags; the include directories are the installed
// copies under the cache).
//
// Why the source sits in a namespace: nvcc includes cuda_runtime.h into
// every TU, which declares CUDA's own float4, int2, ... and fmax, min, abs,
// sqrt, ... in the global namespace. With `using namespace metal;` at global
// scope an unqualified float4 or fmax(x, y) would be ambiguous between the
// two (or, worse, pick CUDA's fmaxf over metal::fmax). Inside namespace
// metal, unqualified lookup finds metal's names first and stops there, so
// the kernel source means what it means on the cpu backend. The source's
// own `using namespace metal;` stays valid there. Names the source declares
// are metal::mtl_src::NAME; the entry functions and tables refer to them
// so. One difference from global scope: a function the source declares
// there would hide metal's functions of the same name rather than overload
// them (MLX adds 64-bit overloads of simd_shuffle_down and calls metal's
// for 32 bits), so the translator brings metal's functions of those names
// into the namespace with using-declarations first. A source that reopens
// namespace metal itself (to specialise metal's templates) is not
// supported: its namespace metal is metal::mtl_src::metal here.
//
// Entry points. Each kernel is one extern "C" __global__ function,
// mtl_entry_<id>, with one parameter: a LaunchArgs by value (the bound
// buffers and where each [[threadgroup(n)]] buffer lies in the block's
// dynamic shared memory). It calls the kernel's run function with the
// cpu backend's signature, run(buffers, tgbufs), so the translator's
// cpu and CUDA targets share the function that unpacks parameters and
// thread attributes. The runner never launches a __global__ function
// itself: each table entry carries host launch stubs compiled into the TU
// (launch, attributes, set_dynamic_smem), so the launch goes through the
// TU's own CUDA runtime whatever way it is linked.
//
// Threadgroup memory. A static threadgroup declaration is __shared__
// storage of its own, declared where the source declares it:
// MTL_THREADGROUP(T, name) declares bytes of T's size and alignment and a
// reference `T& name` to them (no constructor runs, as in Metal). nvcc lays
// them out. The table's slots describe them (sizeof and alignof of their
// types, from the compiler): where they list every declaration
// (MTL_CUDA_KERNEL_INFO_LAID_OUT, KernelInfo::tg_layout), the runner
// reports the kernel's threadgroup memory by Metal's rule over them (each
// aligned, in order, the total rounded up to 16 bytes), as the cpu backend
// and msl's estimate count it, and nvcc's figure (cudaFuncGetAttributes'
// sharedSizeBytes) beside it; elsewhere (a hand-written TU,
// MTL_CUDA_KERNEL_INFO) nvcc's figure is the kernel's. nvcc's figure lies
// between the declarations' sizes and Metal's total: it packs them its
// own way and does not round up. Host-sized [[threadgroup(n)]] buffers
// are the block's dynamic shared memory, in index order, each at a 16-byte
// aligned offset. Unlike the cpu backend, threadgroup memory is not
// poisoned at the start of a threadgroup: a kernel that reads what no
// thread wrote reads what the last block left there.
#pragma once

#include "mtl_rt.h"

// The prelude ends here: `inline` is the keyword again (see mtl_rt.h).
#undef inline

// MTL_DEVICE marks every function the kernel source defines (free
// functions, templates, member functions): device code only, since a
// function that declares threadgroup memory (__shared__) cannot also be
// host code. The prelude's functions are __host__ __device__ (MTL_FN) and
// may be called from it.
#define MTL_DEVICE __device__

// MTL_CONSTANT marks a namespace-scope variable of the kernel source that
// device code reads (Metal's `constant` address space): the translator
// writes it on every one but constexpr scalars, which device code reads as
// they are; a constexpr array or object (a table, a half, a vector) has no
// device copy without it: `MTL_CONSTANT constexpr float4 kOnes =
// float4(1.0f);`. A constexpr one stays usable in constant expressions
// (static_assert, array bounds). (Hand-written TUs: a constant only
// constant expressions use is better left unmarked: nvcc 11's host
// compiler, gcc 11, has crashed on the host side of a __device__ constexpr
// whose initialiser calls the prelude's vector operators or reads a
// vector's component.) A static data member cannot be marked (CUDA allows
// no memory space on one): a static constexpr member of class type that
// device code binds a reference to (Limits<half>::min in a conditional's
// lvalue) is "undefined in device code", a compile error.
#define MTL_CONSTANT __device__

// MTL_ENTRY marks a kernel's run function: device code, inlined into its
// __global__ entry so that the buffer table stays in parameter space.
#define MTL_ENTRY __device__ __forceinline__

// mtl_dynamic_threadgroup is the block's dynamic shared memory: the
// [[threadgroup(n)]] buffers.
extern __shared__ __align__(16) unsigned char mtl_dynamic_threadgroup[];

namespace mtl_rt {
namespace detail {
// bind_tg fills tg with the address of each [[threadgroup(i)]] buffer.
__device__ __forceinline__ void bind_tg(const LaunchArgs& a, void** tg) {
#pragma unroll
  for (int i = 0; i < kMaxTGBuffers; i++) tg[i] = mtl_dynamic_threadgroup + a.tg_offset[i];
}
}  // namespace detail
}  // namespace mtl_rt

// MTL_CUDA_BEGIN_SOURCE and MTL_CUDA_END_SOURCE enclose the kernel source
// (see above).
#define MTL_CUDA_BEGIN_SOURCE \
  namespace metal {           \
  namespace mtl_src {         \
  using namespace ::metal;
#define MTL_CUDA_END_SOURCE \
  }                         \
  }

// MTL_THREADGROUP declares a static threadgroup variable `name` of type T
// (an array type through a typedef, as the cpu target emits them).
#define MTL_THREADGROUP(T, name)                                                \
  __shared__ __align__(alignof(T)) unsigned char mtl_tg_storage_##name[sizeof(T)]; \
  T& name = *reinterpret_cast<T*>(mtl_tg_storage_##name)

// MTL_CUDA_KERNEL defines entry point id (an integer or identifier unique in
// the TU) calling run, and its host stubs. MTL_CUDA_KERNEL_BOUNDED adds
// __launch_bounds__(max_threads), for [[max_total_threads_per_threadgroup]]
// (the translator adds it only there: the bounds cap the registers).
#define MTL_CUDA_KERNEL(id, run) MTL_CUDA_KERNEL_IMPL(id, run, )
#define MTL_CUDA_KERNEL_BOUNDED(id, run, max_threads) MTL_CUDA_KERNEL_IMPL(id, run, __launch_bounds__(max_threads))
#define MTL_CUDA_KERNEL_IMPL(id, run, bounds)                                                                   \
  extern "C" __global__ void bounds mtl_entry_##id(const ::mtl_rt::LaunchArgs mtl_args) {                     \
    void* mtl_tg[::mtl_rt::kMaxTGBuffers];                                                                     \
    ::mtl_rt::detail::bind_tg(mtl_args, mtl_tg);                                                               \
    run(mtl_args.buffers, mtl_tg);                                                                              \
  }                                                                                                             \
  static cudaError_t mtl_launch_##id(dim3 grid, dim3 block, size_t smem, cudaStream_t stream,                   \
                                     const ::mtl_rt::LaunchArgs* args) {                                        \
    void* params[] = {const_cast<::mtl_rt::LaunchArgs*>(args)};                                                \
    return cudaLaunchKernel(reinterpret_cast<const void*>(&mtl_entry_##id), grid, block, params, smem, stream); \
  }                                                                                                             \
  static cudaError_t mtl_attributes_##id(cudaFuncAttributes* attr) {                                            \
    return cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(&mtl_entry_##id));                         \
  }                                                                                                             \
  static cudaError_t mtl_set_dynamic_smem_##id(int bytes) {                                                     \
    return cudaFuncSetAttribute(reinterpret_cast<const void*>(&mtl_entry_##id),                                 \
                                cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);                            \
  }

// MTL_CUDA_KERNEL_INFO is the table entry of entry point id, for a
// hand-written TU: its slots (if any) are for reports, and the runner
// reports nvcc's static shared memory as the kernel's threadgroup memory.
// max_threads is optional (1024).
#define MTL_CUDA_KERNEL_INFO(id, name, nslots, slots, nbufs, bufs, ...)                                      \
  ::mtl_rt::KernelInfo {                                                                                   \
    name, &mtl_launch_##id, &mtl_attributes_##id, &mtl_set_dynamic_smem_##id, nslots, slots,               \
        ::mtl_rt::detail::max_threads_or_default(__VA_ARGS__ + 0), nbufs, bufs, 0                            \
  }

// MTL_CUDA_KERNEL_INFO_LAID_OUT is the table entry the translator writes:
// slots lists every static threadgroup declaration the kernel reaches, so
// the runner reports their Metal layout as the kernel's threadgroup memory
// (KernelInfo::tg_layout).
#define MTL_CUDA_KERNEL_INFO_LAID_OUT(id, name, nslots, slots, nbufs, bufs, max_threads)                  \
  ::mtl_rt::KernelInfo {                                                                                   \
    name, &mtl_launch_##id, &mtl_attributes_##id, &mtl_set_dynamic_smem_##id, nslots, slots,               \
        ::mtl_rt::detail::max_threads_or_default(max_threads), nbufs, bufs, 1                               \
  }

namespace mtl_rt {
namespace detail {
constexpr int max_threads_or_default(int n) { return n > 0 ? n : 1024; }
}  // namespace detail
}  // namespace mtl_rt

// MTL_CUDA_EXPORT exports table (an array of KernelInfo) to the runner as
// mtl_cuda_kernels, with the ABI version as mtl_cuda_abi.
#define MTL_CUDA_EXPORT(table)                                                   \
  extern "C" const int mtl_cuda_abi = MTL_CUDA_ABI;                              \
  extern "C" const ::mtl_rt::KernelInfo* mtl_cuda_kernels(int* count) {          \
    *count = int(sizeof(table) / sizeof((table)[0]));                            \
    return table;                                                                \
  }
