// groups.cu — hand-written kernels (no prelude) exercising barriers,
// threadgroup memory, host-sized threadgroup memory, simd collectives and
// thread positions on the GPU: the cuda counterparts of the cpu backend's
// testdata/tu/groups.cpp, in the shape mtl_cuda.h describes.
#include "mtl_cuda.h"

using namespace mtl_rt;

namespace {

// reduce: out[group] = sum of in[] over the group, by a tree reduction in a
// static threadgroup array.
typedef uint32_t tg0_t[1024];
MTL_ENTRY void reduce(void* const* b, void* const*) {
  MTL_THREADGROUP(tg0_t, s);
  const uint32_t* in = static_cast<const uint32_t*>(b[0]);
  uint32_t* out = static_cast<uint32_t*>(b[1]);
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  s[t] = in[c.thread_position_in_grid[0]];
  threadgroup_barrier();
  for (uint32_t st = c.threads_per_threadgroup[0] / 2; st > 0; st >>= 1) {
    if (t < st) s[t] += s[t + st];
    threadgroup_barrier();
  }
  if (t == 0) out[c.threadgroup_position_in_grid[0]] = s[0];
}

// positions: out[4*gid ..] = thread position in grid (x, y), threadgroup
// position (x, y) for a 2D grid, gid linearised over the grid.
MTL_ENTRY void positions(void* const* b, void* const*) {
  uint32_t* out = static_cast<uint32_t*>(b[0]);
  const ThreadCtx& c = ctx();
  uint32_t gid = c.thread_position_in_grid[1] * c.threads_per_grid[0] + c.thread_position_in_grid[0];
  out[4 * gid + 0] = c.thread_position_in_grid[0];
  out[4 * gid + 1] = c.thread_position_in_grid[1];
  out[4 * gid + 2] = c.threadgroup_position_in_grid[0];
  out[4 * gid + 3] = c.threadgroup_position_in_grid[1];
}

// simd: lanes selected by p[0] (0 = all, 1 = even lanes, 2 = even lanes
// while the odd ones wait at a threadgroup barrier) exchange lane*3+1; each
// writes the sum it received and the active mask.
MTL_ENTRY void simd(void* const* b, void* const*) {
  const uint32_t* p = static_cast<const uint32_t*>(b[0]);
  uint32_t* out = static_cast<uint32_t*>(b[1]);
  const ThreadCtx& c = ctx();
  uint32_t lane = c.thread_index_in_simdgroup;
  uint32_t gid = c.thread_position_in_grid[0];
  out[2 * gid] = 0;
  out[2 * gid + 1] = 0;
  if (p[0] >= 1 && lane % 2 == 1) {
    if (p[0] == 2) threadgroup_barrier();
    return;
  }
  uint32_t mine = lane * 3 + 1;
  uint32_t all[32];
  uint32_t active = 0;
  simd_exchange(&mine, sizeof mine, all, &active);
  uint32_t sum = 0;
  for (int i = 0; i < 32; i++) sum += all[i];
  out[2 * gid] = sum;
  out[2 * gid + 1] = active;
  if (p[0] == 2) threadgroup_barrier();
}

// tgbuf: host-sized threadgroup memory at [[threadgroup(0)]] and (for the
// offsets) [[threadgroup(2)]]: thread t stores t*t in the first and t in
// the second, and after a barrier thread 0 sums t*t - t into out[group].
MTL_ENTRY void tgbuf(void* const* b, void* const* tg) {
  uint32_t* out = static_cast<uint32_t*>(b[0]);
  uint32_t* s = static_cast<uint32_t*>(tg[0]);
  uint32_t* u = static_cast<uint32_t*>(tg[2]);
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  s[t] = t * t;
  u[t] = t;
  threadgroup_barrier();
  if (t == 0) {
    uint32_t sum = 0;
    for (uint32_t i = 0; i < c.threads_per_threadgroup[0]; i++) sum += s[i] - u[i];
    out[c.threadgroup_position_in_grid[0]] = sum;
  }
}

// simd_barrier: each thread stores t+1, passes a simdgroup barrier and
// reads its lane neighbour's (t^1) value, which the barrier makes visible.
typedef uint32_t tg4_t[1024];
MTL_ENTRY void simd_barrier(void* const* b, void* const*) {
  MTL_THREADGROUP(tg4_t, s);
  uint32_t* out = static_cast<uint32_t*>(b[0]);
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  s[t] = t + 1;
  simdgroup_barrier();
  out[c.thread_position_in_grid[0]] = s[t ^ 1];
}

// lanes: for any block shape, each thread writes its linear index, its
// lane and simd group as ctx() computes them, and the hardware's lane and
// warp numbers (%laneid, and the lowest linear index of the threads of its
// warp): Metal's simd groups must be CUDA's warps.
MTL_ENTRY void lanes(void* const* b, void* const*) {
  uint32_t* out = static_cast<uint32_t*>(b[0]);
  const ThreadCtx& c = ctx();
  uint32_t idx = c.thread_index_in_threadgroup;
  uint32_t group = c.threadgroup_position_in_grid[0] + c.threadgroups_per_grid[0] *
                   (c.threadgroup_position_in_grid[1] + c.threadgroups_per_grid[1] * c.threadgroup_position_in_grid[2]);
  uint32_t n = c.threads_per_threadgroup[0] * c.threads_per_threadgroup[1] * c.threads_per_threadgroup[2];
  uint32_t* o = out + 5 * (group * n + idx);
  uint32_t laneid = 0;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(laneid));
  uint32_t first = __reduce_min_sync(__activemask(), idx);
  o[0] = idx;
  o[1] = c.thread_index_in_simdgroup;
  o[2] = c.simdgroup_index_in_threadgroup;
  o[3] = laneid;
  o[4] = first;
}

// spin_barrier: every thread passes p[0] barriers, then writes how many.
MTL_ENTRY void barriers(void* const* b, void* const*) {
  const uint32_t* p = static_cast<const uint32_t*>(b[0]);
  uint32_t* out = static_cast<uint32_t*>(b[1]);
  const ThreadCtx& c = ctx();
  uint32_t n = p[0], k = 0;
  for (uint32_t i = 0; i < n; i++) {
    threadgroup_barrier();
    k++;
  }
  out[c.thread_position_in_grid[0]] = k;
}

}  // namespace

MTL_CUDA_KERNEL(reduce, reduce)
MTL_CUDA_KERNEL(positions, positions)
MTL_CUDA_KERNEL(simd, simd)
MTL_CUDA_KERNEL_BOUNDED(tgbuf, tgbuf, 512)
MTL_CUDA_KERNEL(simd_barrier, simd_barrier)
MTL_CUDA_KERNEL(lanes, lanes)
MTL_CUDA_KERNEL(barriers, barriers)

namespace {
const TGSlot reduce_slots[] = {{0, sizeof(tg0_t), alignof(tg0_t), "s", 4, 1, {1024}}};
const TGSlot simd_barrier_slots[] = {{4, sizeof(tg4_t), alignof(tg4_t), "s", 4, 1, {1024}}};

const KernelInfo kernels[] = {
    MTL_CUDA_KERNEL_INFO_LAID_OUT(reduce, "reduce", 1, reduce_slots, 0, nullptr, 0),
    MTL_CUDA_KERNEL_INFO(positions, "positions", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(simd, "simd", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(tgbuf, "tgbuf", 0, nullptr, 0, nullptr, 512),
    MTL_CUDA_KERNEL_INFO_LAID_OUT(simd_barrier, "simd_barrier", 1, simd_barrier_slots, 0, nullptr, 0),
    MTL_CUDA_KERNEL_INFO(lanes, "lanes", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(barriers, "barriers", 0, nullptr, 0, nullptr),
};
}  // namespace

MTL_CUDA_EXPORT(kernels)
