// stub_rt.cpp — see stub_rt.h. A simd_exchange completes when every live
// lane of the simd group is waiting in one (lanes that returned no longer
// count), like the runner's "no lane can run any further" rule.
#include "stub_rt.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "mtl_rt.h"

namespace {

thread_local mtl_rt::ThreadCtx tctx = [] {
  mtl_rt::ThreadCtx c{};
  c.threads_per_simdgroup = 32;
  c.threads_per_threadgroup[0] = c.threads_per_threadgroup[1] = c.threads_per_threadgroup[2] = 1;
  c.simdgroups_per_threadgroup = 1;
  return c;
}();

struct SimdGroup {
  int live = 0;
  int waiting = 0;
  unsigned long gen = 0;
  uint32_t active = 0;
  size_t size = 0;
  unsigned char buf[32 * 512];
  unsigned char out[32 * 512];
  uint32_t out_active = 0;
};

std::mutex mu;
std::condition_variable cv;
std::vector<SimdGroup> groups;
int tg_live = 0, tg_waiting = 0;
unsigned long tg_gen = 0;
alignas(16) unsigned char tg_mem[64][4096];

void release(SimdGroup& g) {
  std::memcpy(g.out, g.buf, sizeof g.buf);
  g.out_active = g.active;
  g.waiting = 0;
  g.active = 0;
  g.gen++;
  cv.notify_all();
}

}  // namespace

namespace mtl_rt {

const ThreadCtx& ctx() { return tctx; }

void simd_exchange(const void* mine, size_t size, void* all, uint32_t* active) {
  std::unique_lock<std::mutex> l(mu);
  if (groups.empty()) {  // a single thread outside run_threads
    std::memset(all, 0, 32 * size);
    std::memcpy(static_cast<unsigned char*>(all) + tctx.thread_index_in_simdgroup * size, mine, size);
    *active = 1u << tctx.thread_index_in_simdgroup;
    return;
  }
  SimdGroup& g = groups[tctx.simdgroup_index_in_threadgroup];
  if (g.waiting == 0) std::memset(g.buf, 0, sizeof g.buf);
  g.size = size;
  std::memcpy(g.buf + tctx.thread_index_in_simdgroup * size, mine, size);
  g.active |= 1u << tctx.thread_index_in_simdgroup;
  g.waiting++;
  unsigned long my = g.gen;
  if (g.waiting == g.live) release(g);
  cv.wait(l, [&] { return g.gen != my; });
  std::memcpy(all, g.out, 32 * size);
  *active = g.out_active;
}

void simdgroup_barrier() {
  uint32_t active;
  unsigned char all[32];
  simd_exchange(all, 0, all, &active);
}

void threadgroup_barrier() {
  std::unique_lock<std::mutex> l(mu);
  unsigned long my = tg_gen;
  if (++tg_waiting == tg_live) {
    tg_waiting = 0;
    tg_gen++;
    cv.notify_all();
  }
  cv.wait(l, [&] { return tg_gen != my; });
}

void threadgroup_barrier_at(const char*, int, unsigned) { threadgroup_barrier(); }

void* tg_slot(int slot) { return tg_mem[slot]; }

}  // namespace mtl_rt

namespace mtl_test {

void run_threads(int n, const std::function<void()>& body) {
  int nsg = (n + 31) / 32;
  {
    std::lock_guard<std::mutex> l(mu);
    groups.assign(nsg, SimdGroup{});
    for (int i = 0; i < n; i++) groups[i / 32].live++;
    tg_live = n;
    tg_waiting = 0;
  }
  std::vector<std::thread> ts;
  for (int i = 0; i < n; i++) {
    ts.emplace_back([=, &body] {
      mtl_rt::ThreadCtx c{};
      c.thread_position_in_grid[0] = c.thread_position_in_threadgroup[0] = c.thread_index_in_threadgroup = uint32_t(i);
      c.threads_per_threadgroup[0] = c.threads_per_grid[0] = uint32_t(n);
      c.threads_per_threadgroup[1] = c.threads_per_threadgroup[2] = 1;
      c.threads_per_grid[1] = c.threads_per_grid[2] = 1;
      c.threadgroups_per_grid[0] = c.threadgroups_per_grid[1] = c.threadgroups_per_grid[2] = 1;
      c.thread_index_in_simdgroup = uint32_t(i % 32);
      c.simdgroup_index_in_threadgroup = uint32_t(i / 32);
      c.simdgroups_per_threadgroup = uint32_t(nsg);
      c.threads_per_simdgroup = 32;
      c.thread_index_in_quadgroup = uint32_t(i % 4);
      c.quadgroup_index_in_threadgroup = uint32_t(i / 4);
      c.quadgroups_per_threadgroup = uint32_t((n + 3) / 4);
      tctx = c;
      body();
      std::lock_guard<std::mutex> l(mu);
      SimdGroup& g = groups[i / 32];
      g.live--;
      if (g.waiting > 0 && g.waiting == g.live) release(g);
      tg_live--;
      if (tg_waiting > 0 && tg_waiting == tg_live) {
        tg_waiting = 0;
        tg_gen++;
        cv.notify_all();
      }
    });
  }
  for (auto& t : ts) t.join();
  std::lock_guard<std::mutex> l(mu);
  groups.clear();
}

}  // namespace mtl_test
