// sched.cpp — workers, fibers and the per-threadgroup scheduler.
//
// Each worker runs whole threadgroups, one at a time, each thread a fiber.
// The scheduler runs phases: every fiber chosen for a phase runs until it
// blocks (at a threadgroup barrier, a simd-group barrier or collective) or
// returns. A simd group's collective completes as soon as none of that simd
// group's live lanes can run — other simd groups do not take part, so a
// collective never orders the threads of different simd groups. A
// threadgroup barrier completes when every live thread waits at it; threads
// that returned count as arrived (a divergent barrier, reported as a
// warning) and threads waiting at different barriers are a deadlock.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "runner.h"

using namespace mtl_proto;

namespace runner {

constexpr size_t kStackSize = 256 * 1024;
constexpr size_t kAltStackSize = 64 * 1024;

thread_local Worker* tls_worker = nullptr;
Job g_job;
std::atomic<bool> g_abort{false};

// check_barrier_passed (check.cpp) counts the threadgroup barriers a
// threadgroup passes, whatever their mem_flags: the checking mode names a
// race an execution barrier separates.
void check_barrier_passed(Worker* w);

namespace {

std::atomic<uint64_t> g_next{0};

FiberSlot* new_fiber(Worker* w, int index) {
  size_t pg = page_size();
  size_t len = kStackSize + pg;
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  mprotect(m, pg, PROT_NONE);
  FiberSlot* f = new FiberSlot();
  f->stack_map = static_cast<unsigned char*>(m);
  f->stack_map_len = len;
  f->index = index;
  f->worker = w;
  return f;
}

bool waits_simd(uint8_t s) { return s == kAtExchange || s == kAtSimdBarrier; }

// block parks the running fiber in state s and passes control straight to
// the next fiber of the phase, or back to the scheduler after the last one:
// one context switch per blocking call.
inline void block(uint8_t s) {
  Worker* w = tls_worker;
  FiberSlot* f = w->cur;
  w->state[size_t(f->index)] = s;
  w->n_runnable--;
  w->sg_runnable[size_t(f->sg)]--;
  if (waits_simd(s)) w->sg_waiting[size_t(f->sg)]++;
  if (s == kAtTGBarrier) w->n_tgbar++;
  if (s == kDone) {
    w->n_done++;
    w->sg_live[size_t(f->sg)]--;
  }
  if (w->runpos < w->runlist.size()) {
    FiberSlot* next = w->runlist[w->runpos++];
    w->cur = next;
    mtl_fiber::switch_to(&f->fiber, &next->fiber);
  } else {
    w->cur = nullptr;
    mtl_fiber::switch_to(&f->fiber, &w->sched);
  }
}

void fiber_entry(void* arg) {
  FiberSlot* f = static_cast<FiberSlot*>(arg);
  Worker* w = f->worker;
  const Job* job = w->job;
  job->kernel->info->run(job->buffers, w->tgbufs);
  block(kDone);
  Line().str("crash: runner: a finished fiber was resumed").emit();
  _exit(kExitCrash);
}

uint64_t splitmix(uint64_t* x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// run_phase runs each fiber of w->runlist once, in list order.
void run_phase(Worker* w) {
  if (w->runlist.empty()) return;
  w->runpos = 1;
  w->cur = w->runlist[0];
  mtl_fiber::switch_to(&w->sched, &w->cur->fiber);
}

// release_simd releases the waiting lanes of simd group sg: lanes in
// simd_exchange receive every waiting lane's deposit (gathered first, so a
// lane's result buffer may overlap any deposit); lanes at a simdgroup
// barrier simply continue.
void release_simd(Worker* w, int sg) {
  int lo = sg * 32;
  int hi = std::min(lo + 32, w->nthreads);
  uint32_t mask = 0;
  for (int i = lo; i < hi; i++) {
    if (w->state[size_t(i)] == kAtExchange) {
      mask |= 1u << (i - lo);
      FiberSlot* f = w->fibers[size_t(i)];
      std::memcpy(w->exchange + size_t(i - lo) * kMaxExchange, f->ex_mine, f->ex_size);
    }
  }
  for (int i = lo; i < hi; i++) {
    uint8_t s = w->state[size_t(i)];
    if (s == kAtExchange) {
      FiberSlot* f = w->fibers[size_t(i)];
      unsigned char* all = static_cast<unsigned char*>(f->ex_all);
      size_t n = f->ex_size;
      for (int j = 0; j < 32; j++) {
        unsigned char* dst = all + size_t(j) * n;
        if (mask & (1u << j)) {
          size_t m = std::min(n, w->fibers[size_t(lo + j)]->ex_size);
          std::memcpy(dst, w->exchange + size_t(j) * kMaxExchange, m);
          std::memset(dst + m, 0, n - m);
        } else {
          std::memset(dst, 0, n);
        }
      }
      if (f->ex_active) *f->ex_active = mask;
    }
    if (waits_simd(s)) {
      w->state[size_t(i)] = kRunnable;
      w->n_runnable++;
      w->sg_runnable[size_t(sg)]++;
    }
  }
  w->sg_waiting[size_t(sg)] = 0;
  w->sg_ep[size_t(sg)]++;
}

// release_ready_simd releases every simd group none of whose live lanes can
// run while some wait at a collective; it reports whether it released one.
bool release_ready_simd(Worker* w) {
  bool any = false;
  for (int sg = 0; sg < w->nsimd; sg++) {
    if (w->sg_waiting[size_t(sg)] > 0 && w->sg_runnable[size_t(sg)] == 0) {
      release_simd(w, sg);
      any = true;
    }
  }
  return any;
}

bool prepare_arrays(Worker* w, const Job& job) {
  const Kernel* k = job.kernel;
  w->narrays = 0;
  int max_id = -1;
  for (const auto& s : k->slots) max_id = std::max(max_id, s.id);
  w->slot_array.assign(size_t(max_id + 1), -1);
  auto place = [&](size_t size, size_t align, int space, int id) -> TGArray* {
    if (w->narrays >= kMaxTGSlots) return nullptr;
    int idx = w->narrays++;
    TGArray& a = w->arrays[idx];
    size_t pg = page_size();
    size_t padded = round_up(std::max<size_t>(size, 1), std::max<size_t>(align, 16));
    size_t pages = round_up(padded, pg);
    unsigned char* mid = region_base_tg(w->id, idx) + (size_t(1) << (g_layout.tg_shift - 1));
    if (a.map != mid || a.map_len < pages) {
      if (a.map) mmap(a.map, a.map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
      if (mprotect(mid, pages, PROT_READ | PROT_WRITE) != 0) return nullptr;
      a.map = mid;
      a.map_len = pages;
    }
    a.data = a.map + a.map_len - padded;
    a.size = size;
    a.space = space;
    a.id = id;
    a.pad = nullptr;
    a.pad_elem = 0;
    check_prepare_array(&a);
    return &a;
  };
  for (const auto& s : k->slots) {
    TGArray* a = place(s.size, s.align, kSpaceThreadgroup, s.id);
    if (!a) return false;
    a->pad = s.pad.empty() ? nullptr : s.pad.data();
    a->pad_elem = s.pad.size();
    w->slot_array[size_t(s.id)] = w->narrays - 1;
  }
  for (int i = 0; i < kMaxBuffers; i++) w->tgbufs[i] = nullptr;
  for (int i = 0; i < job.ntg; i++) {
    if (!job.tg_bound[i]) continue;
    TGArray* a = place(job.tg_sizes[i], 16, kSpaceHostThreadgroup, i);
    if (!a) return false;
    w->tgbufs[i] = a->data;
  }
  return true;
}

bool prepare_worker(Worker* w, const Job& job) {
  int T = int(job.threads[0] * job.threads[1] * job.threads[2]);
  while (int(w->fibers.size()) < T) {
    FiberSlot* f = new_fiber(w, int(w->fibers.size()));
    if (!f) return false;
    w->fibers.push_back(f);
  }
  w->state.assign(size_t(T), kRunnable);
  w->order.resize(size_t(T));
  w->runlist.reserve(size_t(T));
  w->nthreads = T;
  w->nsimd = (T + 31) / 32;
  w->sg_runnable.assign(size_t(w->nsimd), 0);
  w->sg_waiting.assign(size_t(w->nsimd), 0);
  w->sg_live.assign(size_t(w->nsimd), 0);
  w->sg_ep.assign(size_t(w->nsimd), 0);
  w->job = &job;
  return prepare_arrays(w, job);
}

// thread_ranges formats the thread indices of list as "0-31, 40".
std::string thread_ranges(const std::vector<int>& list) {
  std::string s;
  for (size_t i = 0; i < list.size();) {
    size_t j = i;
    while (j + 1 < list.size() && list[j + 1] == list[j] + 1) j++;
    if (!s.empty()) s += ", ";
    s += std::to_string(list[i]);
    if (j > i) s += "-" + std::to_string(list[j]);
    i = j + 1;
  }
  return s;
}

std::string site_text(const char* file, int line) {
  if (!file || line <= 0) return "a threadgroup_barrier";
  const char* base = std::strrchr(file, '/');
  return std::string("the threadgroup_barrier at ") + (base ? base + 1 : file) + ":" + std::to_string(line);
}

bool same_site(const FiberSlot* a, const FiberSlot* b) {
  if (a->bar_line <= 0 || b->bar_line <= 0) return true;  // a site-less barrier matches any
  return a->bar_line == b->bar_line && (a->bar_file == b->bar_file || std::strcmp(a->bar_file, b->bar_file) == 0);
}

// release_tg_barrier completes a threadgroup barrier every live thread
// waits at, or reports the deadlock of threads waiting at different ones.
bool release_tg_barrier(Worker* w) {
  int T = w->nthreads;
  FiberSlot* first = nullptr;
  bool same = true;
  for (int i = 0; i < T; i++) {
    if (w->state[size_t(i)] != kAtTGBarrier) continue;
    FiberSlot* f = w->fibers[size_t(i)];
    if (!first) {
      first = f;
    } else if (!same_site(first, f)) {
      same = false;
    }
  }
  const uint32_t* gp = w->group_pos;
  if (!same) {
    // Group the waiting threads by barrier for the report.
    std::vector<FiberSlot*> sites;
    std::vector<std::vector<int>> who;
    for (int i = 0; i < T; i++) {
      if (w->state[size_t(i)] != kAtTGBarrier) continue;
      FiberSlot* f = w->fibers[size_t(i)];
      size_t k = 0;
      while (k < sites.size() && !same_site(sites[k], f)) k++;
      if (k == sites.size()) {
        sites.push_back(f);
        who.emplace_back();
      }
      who[k].push_back(i);
    }
    std::string msg = "deadlock in threadgroup (" + std::to_string(gp[0]) + "," + std::to_string(gp[1]) + "," +
                      std::to_string(gp[2]) + "): threads wait at different barriers: ";
    for (size_t k = 0; k < sites.size() && k < 4; k++) {
      if (k) msg += "; ";
      msg += "threads " + thread_ranges(who[k]) + " at " + site_text(sites[k]->bar_file, sites[k]->bar_line);
    }
    if (sites.size() > 4) msg += "; and " + std::to_string(sites.size() - 4) + " more barriers";
    if (w->n_done > 0) msg += "; " + std::to_string(w->n_done) + " threads returned";
    set_error(kErrDeadlock, msg);
    return false;
  }
  if (w->n_done > 0) check_note_divergent(w, first->bar_file, first->bar_line, w->n_done, T);
  unsigned flags = first->bar_flags;
  check_barrier_passed(w);
  if (flags & mtl_rt::kMemThreadgroup) {
    check_end_interval(w);
    w->ep_tg++;
  } else {
    w->unfenced_file = first->bar_file;
    w->unfenced_line = first->bar_line;
  }
  if (flags & mtl_rt::kMemDevice) w->ep_dev++;
  for (int i = 0; i < T; i++) {
    if (w->state[size_t(i)] == kAtTGBarrier) {
      w->state[size_t(i)] = kRunnable;
      w->sg_runnable[size_t(w->fibers[size_t(i)]->sg)]++;
      w->n_runnable++;
    }
  }
  w->n_tgbar = 0;
  return true;
}

// build_runlist lists the fibers of the next phase in the job's order.
void build_runlist(Worker* w, uint64_t g, uint64_t phase) {
  const Job& job = *w->job;
  int T = w->nthreads;
  const uint8_t* st = w->state.data();
  FiberSlot* const* fs = w->fibers.data();
  w->runlist.clear();
  uint64_t x = job.seed ^ (g * 0xD1B54A32D192ED03ull) ^ (phase * 0x8CB92BA72F3D8DD7ull);
  switch (job.order) {
    case kInOrder:
      for (int i = 0; i < T; i++)
        if (st[i] == kRunnable) w->runlist.push_back(fs[i]);
      return;
    case kReversed:
      for (int i = T - 1; i >= 0; i--)
        if (st[i] == kRunnable) w->runlist.push_back(fs[i]);
      return;
    case kShuffle: {
      int* ord = w->order.data();
      for (int i = 0; i < T; i++) ord[i] = i;
      for (int i = T - 1; i > 0; i--) std::swap(ord[i], ord[int(splitmix(&x) % uint64_t(i + 1))]);
      for (int i = 0; i < T; i++)
        if (st[ord[i]] == kRunnable) w->runlist.push_back(fs[ord[i]]);
      return;
    }
    default: {
      // One simd group per phase: the first in the order that can run.
      int n = w->nsimd;
      int pick = -1;
      int perm[32];
      for (int k = 0; k < n; k++) perm[k] = job.order == kSimdReversed ? n - 1 - k : k;
      if (job.order == kSimdShuffle) {
        // One permutation for the whole threadgroup, so each simd group in
        // turn runs ahead to its next threadgroup barrier.
        uint64_t y = job.seed ^ (g * 0xD1B54A32D192ED03ull);
        for (int k = n - 1; k > 0; k--) std::swap(perm[k], perm[int(splitmix(&y) % uint64_t(k + 1))]);
      }
      for (int k = 0; k < n; k++) {
        if (w->sg_runnable[size_t(perm[k])] > 0) {
          pick = perm[k];
          break;
        }
      }
      if (pick < 0) return;
      int lo = pick * 32, hi = std::min(lo + 32, T);
      for (int i = lo; i < hi; i++)
        if (st[i] == kRunnable) w->runlist.push_back(fs[i]);
    }
  }
}

// run_group runs threadgroup g to completion, or reports a deadlock.
void run_group(Worker* w, uint64_t g) {
  const Job& job = *w->job;
  const uint32_t* G = job.groups;
  const uint32_t* TT = job.threads;
  int T = w->nthreads;
  uint32_t gp[3] = {uint32_t(g % G[0]), uint32_t((g / G[0]) % G[1]), uint32_t(g / (uint64_t(G[0]) * G[1]))};
  std::memcpy(w->group_pos, gp, sizeof gp);
  w->group_linear = g;
  // Threadgroup memory starts poisoned: a kernel that reads what no thread
  // wrote sees NaNs and all-ones integers, not friendly zeros.
  for (int i = 0; i < w->narrays; i++) std::memset(w->arrays[i].data, 0xff, w->arrays[i].size);
  check_begin_group(w);
  uint32_t simdgroups = uint32_t(w->nsimd);
  uint32_t quadgroups = uint32_t((T + 3) / 4);
  for (int sg = 0; sg < w->nsimd; sg++) {
    w->sg_runnable[size_t(sg)] = std::min(32, T - sg * 32);
    w->sg_live[size_t(sg)] = w->sg_runnable[size_t(sg)];
    w->sg_waiting[size_t(sg)] = 0;
  }
  for (int i = 0; i < T; i++) {
    FiberSlot* f = w->fibers[size_t(i)];
    mtl_rt::ThreadCtx& c = f->tc;
    uint32_t idx = uint32_t(i);
    uint32_t l[3] = {idx % TT[0], (idx / TT[0]) % TT[1], idx / (TT[0] * TT[1])};
    for (int d = 0; d < 3; d++) {
      c.thread_position_in_threadgroup[d] = l[d];
      c.threadgroup_position_in_grid[d] = gp[d];
      c.threads_per_threadgroup[d] = TT[d];
      c.threadgroups_per_grid[d] = G[d];
      c.threads_per_grid[d] = G[d] * TT[d];
      c.thread_position_in_grid[d] = gp[d] * TT[d] + l[d];
    }
    c.thread_index_in_threadgroup = idx;
    c.thread_index_in_simdgroup = idx % 32;
    c.simdgroup_index_in_threadgroup = idx / 32;
    c.simdgroups_per_threadgroup = simdgroups;
    c.threads_per_simdgroup = 32;
    c.thread_index_in_quadgroup = idx % 4;
    c.quadgroup_index_in_threadgroup = idx / 4;
    c.quadgroups_per_threadgroup = quadgroups;
    f->sg = i / 32;
    f->bar_file = nullptr;
    f->bar_line = 0;
    // Stagger stack tops across a page so that the fibers' hot frames do
    // not all compete for the same L1 cache sets.
    size_t color = size_t((i * 7) % 64) * 64;
    mtl_fiber::init(&f->fiber, f->stack_map + page_size(), kStackSize - color, fiber_entry, f);
    w->state[size_t(i)] = kRunnable;
  }
  w->n_runnable = T;
  w->n_tgbar = 0;
  w->n_done = 0;
  w->unfenced_file = nullptr;
  w->unfenced_line = 0;
  uint64_t phase = 0;
  for (;;) {
    if (g_abort.load(std::memory_order_relaxed)) return;
    if (w->n_runnable > 0) {
      build_runlist(w, g, phase++);
      run_phase(w);
      release_ready_simd(w);
      continue;
    }
    if (w->n_done == T) {
      check_end_interval(w);
      return;
    }
    if (release_ready_simd(w)) continue;
    if (!release_tg_barrier(w)) return;
  }
}

// ---------------------------------------------------------------------------
// Worker pool.

struct Pool {
  std::vector<Worker*> workers;
  std::mutex mu;
  std::condition_variable cv, done_cv;
  uint64_t generation = 0;
  int running = 0;
  uint64_t ngroups = 0;
};

Pool g_pool;

void worker_main(Worker* w) {
  tls_worker = w;
  w->altstack = std::malloc(kAltStackSize);
  stack_t ss;
  ss.ss_sp = w->altstack;
  ss.ss_size = kAltStackSize;
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(g_pool.mu);
      g_pool.cv.wait(lock, [&] { return g_pool.generation != seen; });
      seen = g_pool.generation;
    }
    if (prepare_worker(w, g_job)) {
      for (;;) {
        if (g_abort.load(std::memory_order_relaxed)) break;
        uint64_t g = g_next.fetch_add(1, std::memory_order_relaxed);
        if (g >= g_pool.ngroups) break;
        run_group(w, g);
      }
    } else {
      set_error(kErrOther, "cannot allocate fiber stacks or threadgroup memory");
    }
    {
      std::lock_guard<std::mutex> lock(g_pool.mu);
      if (--g_pool.running == 0) g_pool.done_cv.notify_all();
    }
  }
}

std::mutex g_err_mu;

}  // namespace

std::string g_err;
uint8_t g_err_kind = kErrOther;

void set_error(uint8_t kind, const std::string& msg) {
  std::lock_guard<std::mutex> lock(g_err_mu);
  if (g_err.empty()) {
    g_err = msg;
    g_err_kind = kind;
  }
  g_abort.store(true, std::memory_order_relaxed);
}

void start_pool(int n) {
  for (int i = 0; i < n; i++) {
    Worker* w = new Worker();
    w->id = i;
    g_pool.workers.push_back(w);
    std::thread(worker_main, w).detach();
  }
}

int pool_size() { return int(g_pool.workers.size()); }

// run_dispatch runs g_job over all threadgroups and waits for the workers.
void run_dispatch(uint64_t ngroups) {
  g_next.store(0);
  g_abort.store(false);
  std::unique_lock<std::mutex> lock(g_pool.mu);
  g_pool.ngroups = ngroups;
  g_pool.running = int(g_pool.workers.size());
  g_pool.generation++;
  g_pool.cv.notify_all();
  g_pool.done_cv.wait(lock, [] { return g_pool.running == 0; });
}

void kill_current_fiber() {
  g_abort.store(true, std::memory_order_relaxed);
  Worker* w = tls_worker;
  FiberSlot* f = w->cur;
  w->cur = nullptr;
  mtl_fiber::switch_to(&f->fiber, &w->sched);
  Line().str("crash: runner: a killed fiber was resumed").emit();
  _exit(kExitCrash);
}

}  // namespace runner

// ---------------------------------------------------------------------------
// The mtl_rt ABI, exported to loaded kernels (the runner links with -rdynamic).

namespace mtl_rt {

using namespace runner;

const ThreadCtx& ctx() { return tls_worker->cur->tc; }

void threadgroup_barrier_at(const char* file, int line, unsigned flags) {
  FiberSlot* f = tls_worker->cur;
  f->bar_file = file;
  f->bar_line = line;
  f->bar_flags = flags;
  block(kAtTGBarrier);
}

void threadgroup_barrier() { threadgroup_barrier_at(nullptr, 0, kMemAll); }

void simdgroup_barrier() { block(kAtSimdBarrier); }

void simd_exchange(const void* mine, size_t size, void* all, uint32_t* active) {
  Worker* w = tls_worker;
  FiberSlot* f = w->cur;
  if (size > kMaxExchange) {
    Line().str("crash: simd_exchange of more than 512 bytes").emit();
    _exit(kExitCrash);
  }
  f->ex_mine = mine;
  f->ex_size = size;
  f->ex_all = all;
  f->ex_active = active;
  block(kAtExchange);
}

void* tg_slot(int slot) {
  Worker* w = tls_worker;
  if (slot < 0 || size_t(slot) >= w->slot_array.size() || w->slot_array[size_t(slot)] < 0) {
    Line().str("crash: tg_slot(").uint(uint64_t(slot < 0 ? 0 : slot)).str(") is not in the kernel's threadgroup slot table").emit();
    _exit(kExitCrash);
  }
  return w->arrays[w->slot_array[size_t(slot)]].data;
}

}  // namespace mtl_rt
