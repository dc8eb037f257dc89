// mtl_cuda_abi.h — the data a cuda kernel object and the cuda runner
// exchange: the kernel table a TU exports (mtl_cuda_kernels) and the one
// parameter of every entry point. Plain host C++ over cuda_runtime.h's
// types, so the runner (host code) and a TU (nvcc) read one definition.
// mtl_cuda.h explains the contract; this file only holds its types.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

// MTL_CUDA_ABI is the version of this contract. A TU exports it as
// mtl_cuda_abi and the runner refuses an object built against another.
#define MTL_CUDA_ABI 2

namespace mtl_rt {

// kMaxBuffers is the number of [[buffer(n)]] indices, 0..30 (Metal's
// argument table); kMaxTGBuffers that of [[threadgroup(n)]] indices.
constexpr int kMaxBuffers = 31;
constexpr int kMaxTGBuffers = 31;

// LaunchArgs is the one parameter of every entry point, passed by value.
struct LaunchArgs {
  void* buffers[kMaxBuffers];         // device pointer bound at [[buffer(i)]], or nullptr
  uint32_t tg_offset[kMaxTGBuffers];  // byte offset of [[threadgroup(i)]] in the dynamic shared memory
};

// A TGSlot describes one static threadgroup declaration reachable from a
// kernel, as on the cpu backend (runtime/mtl_rt.h there). On the GPU it
// does not place the storage (nvcc lays the __shared__ declarations out):
// the runner lays the slots out by Metal's rule, for reports and, where
// the table lists every declaration (KernelInfo::tg_layout), for the
// kernel's threadgroup memory as Metal counts it.
struct TGSlot {
  int id;
  size_t size;
  size_t align;
  const char* name;  // declaration name, for reports
  size_t elem_size;  // 0: unknown
  int rank;
  size_t extents[4];
};

// A BufferParam describes one [[buffer(n)]] parameter of an entry point.
struct BufferParam {
  int index;
  const char* name;  // parameter name, for reports
  int writable;      // a non-const device pointer or reference
  size_t elem_size;  // pointee size
};

// A KernelInfo is one entry point of a TU: the cuda counterpart of the cpu
// backend's KernelInfo, with host stubs compiled into the TU where the cpu
// has a run function, so that launches go through the TU's own CUDA
// runtime.
struct KernelInfo {
  const char* name;  // kernel function name, or host_name for template instantiations
  // launch launches the entry on stream with dynamic_smem bytes of dynamic
  // shared memory (cudaLaunchKernel's result).
  cudaError_t (*launch)(dim3 grid, dim3 block, size_t dynamic_smem, cudaStream_t stream, const LaunchArgs* args);
  // attributes is cudaFuncGetAttributes of the entry.
  cudaError_t (*attributes)(cudaFuncAttributes* attr);
  // set_dynamic_smem raises the entry's dynamic shared memory limit
  // (cudaFuncAttributeMaxDynamicSharedMemorySize), needed past 48 KiB.
  cudaError_t (*set_dynamic_smem)(int bytes);
  int nslots;
  const TGSlot* slots;
  int max_threads;  // [[max_total_threads_per_threadgroup]], else 1024
  int nbufs;        // buffer parameters; 0 with bufs == nullptr: unknown
  const BufferParam* bufs;
  // tg_layout is 1 when slots list every static threadgroup declaration the
  // kernel reaches, once each (the translator's tables): the kernel's
  // threadgroup memory is then their Metal layout, each aligned, the total
  // rounded up to 16 bytes, as the cpu backend and msl count it. 0 (a
  // hand-written TU, or storage the translator could not describe): the
  // runner reports nvcc's static shared memory instead.
  int tg_layout;
};

}  // namespace mtl_rt

// Every cuda TU exports these two symbols (MTL_CUDA_EXPORT in mtl_cuda.h).
extern "C" const int mtl_cuda_abi;
extern "C" const mtl_rt::KernelInfo* mtl_cuda_kernels(int* count);
