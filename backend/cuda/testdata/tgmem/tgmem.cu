// tgmem.cu — the kernels of tgmem.metal as the CUDA target declares their
// threadgroup memory (MTL_THREADGROUP, one __shared__ block each, laid out
// by nvcc).
#include <metal_stdlib>

#include "mtl_cuda.h"

MTL_CUDA_BEGIN_SOURCE

typedef float floats_a_t[256];
MTL_DEVICE void floats(float* out, uint tid) {
  MTL_THREADGROUP(floats_a_t, a);
  a[tid] = float(tid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = a[255 - tid];
}

typedef float4 aligned_v_t[32];
typedef float aligned_f_t[64];
typedef half aligned_h_t[128];
MTL_DEVICE void aligned(float* out, uint tid) {
  MTL_THREADGROUP(aligned_v_t, v);
  MTL_THREADGROUP(aligned_f_t, f);
  MTL_THREADGROUP(aligned_h_t, h);
  v[tid % 32] = float4(float(tid));
  f[tid % 64] = float(tid);
  h[tid % 128] = half(tid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = v[(tid + 1) % 32].x + f[(tid + 3) % 64] + float(h[(tid + 5) % 128]);
}

typedef float padded_a_t[3];
typedef float4 padded_c_t[2];
typedef half padded_b_t[5];
MTL_DEVICE void padded(float* out, uint tid) {
  MTL_THREADGROUP(padded_a_t, a);
  MTL_THREADGROUP(padded_c_t, c);
  MTL_THREADGROUP(padded_b_t, b);
  if (tid < 3) a[tid] = float(tid);
  if (tid < 2) c[tid] = float4(1.0f);
  if (tid < 5) b[tid] = half(tid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = a[tid % 3] + c[tid % 2].y + float(b[tid % 5]);
}

typedef float helper_h_t[64];
MTL_DEVICE float helper_sum(uint tid) {
  MTL_THREADGROUP(helper_h_t, h);
  h[tid % 64] = float(tid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return h[(tid + 1) % 64];
}

typedef uint helper_k_t[16];
MTL_DEVICE void helper(float* out, uint tid) {
  MTL_THREADGROUP(helper_k_t, k);
  k[tid % 16] = tid;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = helper_sum(tid) + float(k[(tid + 2) % 16]);
}

#define MTL_TGMEM_RUN(name)                                                         \
  MTL_ENTRY void run_##name(void* const* b, void* const*) {                         \
    name(static_cast<float*>(b[0]), mtl_rt::ctx().thread_index_in_threadgroup);     \
  }
MTL_TGMEM_RUN(floats)
MTL_TGMEM_RUN(aligned)
MTL_TGMEM_RUN(padded)
MTL_TGMEM_RUN(helper)

MTL_CUDA_END_SOURCE

MTL_CUDA_KERNEL(floats, metal::mtl_src::run_floats)
MTL_CUDA_KERNEL(aligned, metal::mtl_src::run_aligned)
MTL_CUDA_KERNEL(padded, metal::mtl_src::run_padded)
MTL_CUDA_KERNEL(helper, metal::mtl_src::run_helper)

namespace {
const mtl_rt::KernelInfo kernels[] = {
    MTL_CUDA_KERNEL_INFO(floats, "floats", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(aligned, "aligned", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(padded, "padded", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(helper, "helper", 0, nullptr, 0, nullptr),
};
}  // namespace

MTL_CUDA_EXPORT(kernels)
