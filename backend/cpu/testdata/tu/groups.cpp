// groups.cpp — hand-written kernels (no prelude) exercising barriers,
// threadgroup slots, host-sized threadgroup memory, simd collectives and
// thread orders. Each kernel mirrors what the translator would emit.
#include <cstdint>
#include <cstring>

#include "mtl_rt.h"

using namespace mtl_rt;

namespace {

// reduce: out[group] = sum of in[] over the group, by a tree reduction in a
// static threadgroup array.
typedef uint32_t tg0_t[1024];
void reduce(const uint32_t* in, uint32_t* out) {
  tg0_t& s = *static_cast<tg0_t*>(tg_slot(0));
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
void reduce_run(void* const* b, void* const*) {
  reduce(static_cast<const uint32_t*>(b[0]), static_cast<uint32_t*>(b[1]));
}
const TGSlot reduce_slots[] = {{0, sizeof(tg0_t), alignof(tg0_t), "s"}};

// neighbour: each thread stores its value, then reads its right
// neighbour's. Without a barrier the result depends on thread order.
typedef uint32_t tg1_t[1024];
template <bool Barrier>
void neighbour(uint32_t* out) {
  tg1_t& s = *static_cast<tg1_t*>(tg_slot(1));
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  uint32_t n = c.threads_per_threadgroup[0];
  s[t] = t + 1;
  if (Barrier) threadgroup_barrier();
  out[c.thread_position_in_grid[0]] = s[(t + 1) % n];
}
void racy_run(void* const* b, void* const*) { neighbour<false>(static_cast<uint32_t*>(b[0])); }
void fixed_run(void* const* b, void* const*) { neighbour<true>(static_cast<uint32_t*>(b[0])); }
const TGSlot neighbour_slots[] = {{1, sizeof(tg1_t), alignof(tg1_t), "s"}};

// barriers: p[0] barriers per thread; out[gid] counts them.
void barriers(const uint32_t* p, uint32_t* out) {
  const ThreadCtx& c = ctx();
  uint32_t n = p[0];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    threadgroup_barrier();
    k++;
  }
  out[c.thread_position_in_grid[0]] = k;
}
void barriers_run(void* const* b, void* const*) {
  barriers(static_cast<const uint32_t*>(b[0]), static_cast<uint32_t*>(b[1]));
}

// early_return: threads at or past p[0] return before a barrier the others
// wait at.
void early_return(const uint32_t* p, uint32_t* out) {
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  if (t >= p[0]) return;
  threadgroup_barrier();
  out[c.thread_position_in_grid[0]] = 1;
}
void early_return_run(void* const* b, void* const*) {
  early_return(static_cast<const uint32_t*>(b[0]), static_cast<uint32_t*>(b[1]));
}

// split_barrier: threads below p[0] wait at one barrier (line 10), the
// others at another (line 20): a deadlock on a GPU.
void split_barrier(const uint32_t* p, uint32_t* out) {
  const ThreadCtx& c = ctx();
  if (c.thread_index_in_threadgroup < p[0]) {
    threadgroup_barrier_at("split.metal", 10, kMemAll);
  } else {
    threadgroup_barrier_at("split.metal", 20, kMemAll);
  }
  out[c.thread_position_in_grid[0]] = 1;
}
void split_barrier_run(void* const* b, void* const*) {
  split_barrier(static_cast<const uint32_t*>(b[0]), static_cast<uint32_t*>(b[1]));
}

// layout: two slots with different alignments; out[0] says whether they
// lie in separate regions (more than a page apart) and out[1] whether both
// start poisoned (every byte 0xff).
typedef char tg2_t[3];
typedef double tg3_t[2];
void layout(uint32_t* out) {
  tg2_t& a = *static_cast<tg2_t*>(tg_slot(2));
  tg3_t& d = *static_cast<tg3_t*>(tg_slot(3));
  const ThreadCtx& c = ctx();
  if (c.thread_index_in_threadgroup == 0) {
    long dist = reinterpret_cast<char*>(&d[0]) - &a[0];
    out[0] = uint32_t(dist > 4096 || dist < -4096);
    const unsigned char* ab = reinterpret_cast<const unsigned char*>(&a[0]);
    const unsigned char* db = reinterpret_cast<const unsigned char*>(&d[0]);
    bool poisoned = true;
    for (size_t i = 0; i < sizeof(tg2_t); i++) poisoned = poisoned && ab[i] == 0xff;
    for (size_t i = 0; i < sizeof(tg3_t); i++) poisoned = poisoned && db[i] == 0xff;
    out[1] = uint32_t(poisoned);
    a[0] = 7;
    d[1] = 2.5;
  }
}
void layout_run(void* const* b, void* const*) { layout(static_cast<uint32_t*>(b[0])); }
const TGSlot layout_slots[] = {{2, sizeof(tg2_t), alignof(tg2_t), "a"}, {3, sizeof(tg3_t), alignof(tg3_t), "d"}};

// positions: out[4*gid ..] = thread position in grid (x, y), threadgroup
// position (x, y) for a 2D grid, gid linearised over the grid.
void positions(uint32_t* out) {
  const ThreadCtx& c = ctx();
  uint32_t gid = c.thread_position_in_grid[1] * c.threads_per_grid[0] + c.thread_position_in_grid[0];
  out[4 * gid + 0] = c.thread_position_in_grid[0];
  out[4 * gid + 1] = c.thread_position_in_grid[1];
  out[4 * gid + 2] = c.threadgroup_position_in_grid[0];
  out[4 * gid + 3] = c.threadgroup_position_in_grid[1];
}
void positions_run(void* const* b, void* const*) { positions(static_cast<uint32_t*>(b[0])); }

// simd: lanes selected by p[0] (0 = all, 1 = even lanes, 2 = even lanes
// while the odd ones wait at a threadgroup barrier) exchange lane*3+1; each
// writes the sum it received and the active mask.
void simd(const uint32_t* p, uint32_t* out) {
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
void simd_run(void* const* b, void* const*) {
  simd(static_cast<const uint32_t*>(b[0]), static_cast<uint32_t*>(b[1]));
}

// tgbuf: host-sized threadgroup memory at [[threadgroup(0)]]: thread t
// stores t*t, and after a barrier thread 0 sums them into out[group].
void tgbuf(uint32_t* out, uint32_t* s) {
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  s[t] = t * t;
  threadgroup_barrier();
  if (t == 0) {
    uint32_t sum = 0;
    for (uint32_t i = 0; i < c.threads_per_threadgroup[0]; i++) sum += s[i];
    out[c.threadgroup_position_in_grid[0]] = sum;
  }
}
void tgbuf_run(void* const* b, void* const* tg) {
  tgbuf(static_cast<uint32_t*>(b[0]), static_cast<uint32_t*>(tg[0]));
}

// simd_barrier: each thread stores t+1, passes a simdgroup barrier and
// reads its lane neighbour's (t^1) value, which the barrier makes visible
// in any thread order.
typedef uint32_t tg4_t[1024];
void simd_barrier(uint32_t* out) {
  tg4_t& s = *static_cast<tg4_t*>(tg_slot(4));
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  s[t] = t + 1;
  simdgroup_barrier();
  out[c.thread_position_in_grid[0]] = s[t ^ 1];
}
void simd_barrier_run(void* const* b, void* const*) { simd_barrier(static_cast<uint32_t*>(b[0])); }
const TGSlot simd_barrier_slots[] = {{4, sizeof(tg4_t), alignof(tg4_t), "s"}};

// order_log: every thread appends its index to out[1..] (out[0] counts),
// takes part in a simd collective, and appends again: out is the order
// the scheduler ran the threads in (fibers of one threadgroup run one at a
// time, so the counter needs no atomics).
void order_log(uint32_t* out) {
  const ThreadCtx& c = ctx();
  uint32_t t = c.thread_index_in_threadgroup;
  out[1 + out[0]++] = t;
  uint32_t all[32];
  uint32_t active = 0;
  simd_exchange(&t, sizeof t, all, &active);
  out[1 + out[0]++] = t;
}
void order_log_run(void* const* b, void* const*) { order_log(static_cast<uint32_t*>(b[0])); }

const KernelInfo kernels[] = {
    {"reduce", reduce_run, 1, reduce_slots, 1024},
    {"racy", racy_run, 1, neighbour_slots, 1024},
    {"racy_fixed", fixed_run, 1, neighbour_slots, 1024},
    {"barriers", barriers_run, 0, nullptr, 1024},
    {"early_return", early_return_run, 0, nullptr, 1024},
    {"split_barrier", split_barrier_run, 0, nullptr, 1024},
    {"layout", layout_run, 2, layout_slots, 1024},
    {"positions", positions_run, 0, nullptr, 1024},
    {"simd", simd_run, 0, nullptr, 1024},
    {"simd_barrier", simd_barrier_run, 1, simd_barrier_slots, 1024},
    {"tgbuf", tgbuf_run, 0, nullptr, 512},
    {"order_log", order_log_run, 0, nullptr, 1024},
};

}  // namespace

extern "C" const KernelInfo* mtl_kernels(int* count) {
  *count = int(sizeof kernels / sizeof kernels[0]);
  return kernels;
}
