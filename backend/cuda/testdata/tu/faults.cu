// faults.cu — hand-written kernels that fail on the GPU in each way the
// cuda runner must report (and survive, by being restarted).
#include "mtl_cuda.h"

using namespace mtl_rt;

namespace {

// copy: out[gid] = in[gid] * 2, the healthy kernel run between failures.
MTL_ENTRY void copy(void* const* b, void* const*) {
  uint32_t gid = ctx().thread_position_in_grid[0];
  static_cast<uint32_t*>(b[1])[gid] = static_cast<const uint32_t*>(b[0])[gid] * 2;
}

// null_write: thread 3 writes through a null pointer.
MTL_ENTRY void null_write(void* const* b, void* const*) {
  volatile uint32_t* p = static_cast<uint32_t*>(b[0]);
  if (ctx().thread_index_in_threadgroup == 3) p = nullptr;
  *p = 1;
}

// far_write: thread 0 writes 64 GiB past the end of buffer 0, far outside
// any allocation.
MTL_ENTRY void far_write(void* const* b, void* const*) {
  volatile uint32_t* p = static_cast<uint32_t*>(b[0]);
  if (ctx().thread_position_in_grid[0] == 0) p[uint64_t(16) << 30] = 1;
}

// trap: thread 5 executes a trap instruction (what a failed device-side
// assert does).
MTL_ENTRY void trap(void* const* b, void* const*) {
  if (ctx().thread_position_in_grid[0] == 5) __trap();
  static_cast<uint32_t*>(b[0])[0] = 1;
}

// spin: loops until p[0] is non-zero, which nobody makes it.
MTL_ENTRY void spin(void* const* b, void* const*) {
  volatile uint32_t* p = static_cast<uint32_t*>(b[0]);
  while (p[0] == 0) {
  }
}

// past_end: thread 0 writes the 4 bytes just past the end of buffer 0.
MTL_ENTRY void past_end(void* const* b, void* const*) {
  const ThreadCtx& c = ctx();
  uint32_t n = c.threads_per_grid[0];
  uint32_t gid = c.thread_position_in_grid[0];
  uint32_t* p = static_cast<uint32_t*>(b[0]);
  p[gid] = gid;
  if (gid == 0) p[n] = 0xdeadbeef;
}

// before_start: thread 0 writes the 4 bytes just before buffer 0.
MTL_ENTRY void before_start(void* const* b, void* const*) {
  uint32_t* p = static_cast<uint32_t*>(b[0]);
  if (ctx().thread_position_in_grid[0] == 0) p[-1] = 0xdeadbeef;
}

// big_shared: 40 KiB of static shared memory, to which the host adds
// [[threadgroup(0)]] memory: past the GPU's limit per block the launch is
// refused.
typedef float big_t[10240];
MTL_ENTRY void big_shared(void* const* b, void* const* tg) {
  MTL_THREADGROUP(big_t, s);
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  float* extra = static_cast<float*>(tg[0]);
  s[t] = float(t);
  extra[t] = 1.0f;
  threadgroup_barrier();
  static_cast<float*>(b[0])[c.thread_position_in_grid[0]] = s[(t + 1) % c.threads_per_threadgroup[0]] + extra[0];
}

}  // namespace

MTL_CUDA_KERNEL(copy, copy)
MTL_CUDA_KERNEL(null_write, null_write)
MTL_CUDA_KERNEL(far_write, far_write)
MTL_CUDA_KERNEL(trap, trap)
MTL_CUDA_KERNEL(spin, spin)
MTL_CUDA_KERNEL(past_end, past_end)
MTL_CUDA_KERNEL(before_start, before_start)
MTL_CUDA_KERNEL(big_shared, big_shared)

namespace {
const TGSlot big_slots[] = {{0, sizeof(big_t), alignof(big_t), "s", 4, 1, {10240}}};

const KernelInfo kernels[] = {
    MTL_CUDA_KERNEL_INFO(copy, "copy", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(null_write, "null_write", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(far_write, "far_write", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(trap, "trap", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(spin, "spin", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(past_end, "past_end", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(before_start, "before_start", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO_LAID_OUT(big_shared, "big_shared", 1, big_slots, 0, nullptr, 0),
};
}  // namespace

MTL_CUDA_EXPORT(kernels)
