// race.cu — a threadgroup-memory race and its fix, for compute-sanitizer's
// racecheck (TestGPURacecheck). The #line directives name a .metal file,
// as the translator's do.
#include "mtl_cuda.h"

using namespace mtl_rt;

namespace {

typedef uint32_t slots_t[64];

template <bool Barrier>
__device__ __forceinline__ void neighbour(void* const* b) {
#line 10 "race.metal"
  MTL_THREADGROUP(slots_t, s);
  uint32_t* out = static_cast<uint32_t*>(b[0]);
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  uint32_t n = c.threads_per_threadgroup[0];
  s[t] = t + 1;
  if (Barrier) threadgroup_barrier();
  out[t] = s[(t + 33) % n];
}

MTL_ENTRY void racy(void* const* b, void* const*) { neighbour<false>(b); }
MTL_ENTRY void fixed(void* const* b, void* const*) { neighbour<true>(b); }

}  // namespace

MTL_CUDA_KERNEL(racy, racy)
MTL_CUDA_KERNEL(fixed, fixed)

namespace {
const KernelInfo kernels[] = {
    MTL_CUDA_KERNEL_INFO(racy, "racy", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(fixed, "fixed", 0, nullptr, 0, nullptr),
};
}  // namespace

MTL_CUDA_EXPORT(kernels)
