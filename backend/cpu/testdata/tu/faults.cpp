// faults.cpp — hand-written kernels (no prelude) that fail in each way the
// runner must survive.
#include <cstdint>
#include <cstdlib>

#include "mtl_rt.h"

using namespace mtl_rt;

namespace {

// copy: out[gid] = in[gid] * 2, the healthy kernel run between failures.
void copy_run(void* const* b, void* const*) {
  uint32_t gid = ctx().thread_position_in_grid[0];
  static_cast<uint32_t*>(b[1])[gid] = static_cast<const uint32_t*>(b[0])[gid] * 2;
}

void null_write_run(void* const* b, void* const*) {
  volatile uint32_t* p = static_cast<uint32_t*>(b[0]);
  if (ctx().thread_index_in_threadgroup == 3) p = nullptr;
  *p = 1;
}

void abort_run(void* const*, void* const*) {
  if (ctx().thread_position_in_grid[0] == 5) std::abort();
}

void spin_run(void* const* b, void* const*) {
  volatile uint32_t* p = static_cast<uint32_t*>(b[0]);
  while (p[0] == 0) {
  }
}

// past_end: thread 0 writes the 4 bytes just past the end of buffer 0.
void past_end_run(void* const* b, void* const*) {
  const ThreadCtx& c = ctx();
  uint32_t n = c.threads_per_grid[0];
  uint32_t gid = c.thread_position_in_grid[0];
  uint32_t* p = static_cast<uint32_t*>(b[0]);
  p[gid] = gid;
  if (gid == 0) p[n] = 0xdeadbeef;
}

// before_start: thread 0 writes the 4 bytes just before buffer 0.
void before_start_run(void* const* b, void* const*) {
  uint32_t* p = static_cast<uint32_t*>(b[0]);
  if (ctx().thread_position_in_grid[0] == 0) p[-1] = 0xdeadbeef;
}

// far_write: thread 0 writes 64 MiB past the end of buffer 0.
void far_write_run(void* const* b, void* const*) {
  volatile uint32_t* p = static_cast<uint32_t*>(b[0]);
  if (ctx().thread_position_in_grid[0] == 0) p[16u << 20] = 1;
}

// guard_write: thread 0 writes one page past the end of buffer 0, inside
// the trailing guard page.
void guard_write_run(void* const* b, void* const*) {
  volatile char* p = static_cast<char*>(b[0]);
  if (ctx().thread_position_in_grid[0] == 0) p[4096 + 64] = 1;
}

// recurse: unbounded recursion overflows the fiber's stack.
uint32_t deep(volatile uint32_t* p, uint32_t n) {
  volatile char pad[512];
  pad[n % 512] = char(n);
  return deep(p, n + 1) + pad[0];
}
void recurse_run(void* const* b, void* const*) {
  volatile uint32_t* p = static_cast<uint32_t*>(b[0]);
  p[0] = deep(p, 0);
}

// divide: integer division by zero (p[0] is 0).
void divide_run(void* const* b, void* const*) {
  volatile uint32_t* p = static_cast<uint32_t*>(b[0]);
  p[1] = 7 / p[0];
}

const KernelInfo kernels[] = {
    {"copy", copy_run, 0, nullptr, 1024},
    {"null_write", null_write_run, 0, nullptr, 1024},
    {"abort", abort_run, 0, nullptr, 1024},
    {"spin", spin_run, 0, nullptr, 1024},
    {"past_end", past_end_run, 0, nullptr, 1024},
    {"before_start", before_start_run, 0, nullptr, 1024},
    {"far_write", far_write_run, 0, nullptr, 1024},
    {"guard_write", guard_write_run, 0, nullptr, 1024},
    {"recurse", recurse_run, 0, nullptr, 1024},
    {"divide", divide_run, 0, nullptr, 1024},
};

}  // namespace

extern "C" const KernelInfo* mtl_kernels(int* count) {
  *count = int(sizeof kernels / sizeof kernels[0]);
  return kernels;
}
