// runner.cpp — the cpu runner: loads translated kernels (shared objects
// exporting mtl_kernels), binds guarded buffers and runs dispatches, each
// threadgroup's threads as cooperative fibers on one worker thread.
//
// It speaks the framed protocol of protocol.h on stdin/stdout. A kernel that
// deadlocks is reported in-band and the runner stays alive; a kernel that
// faults kills the runner with a distinct exit status after writing a one
// line report to stderr, and metalab restarts it.
//
// Usage: runner [-workers N]
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fiber.h"
#include "mtl_rt.h"
#include "protocol.h"

using namespace mtl_proto;

namespace {

constexpr size_t kStackSize = 256 * 1024;
constexpr int kMaxThreads = 1024;
constexpr int kMaxBuffers = 128;
constexpr size_t kAltStackSize = 64 * 1024;
constexpr size_t kMaxExchange = 512;  // bytes one lane may deposit

size_t page_size() {
  static size_t pg = size_t(sysconf(_SC_PAGESIZE));
  return pg;
}

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// ---------------------------------------------------------------------------
// Async-signal-safe reporting.

void raw_write(const char* s, size_t n) {
  while (n > 0) {
    ssize_t k = write(2, s, n);
    if (k <= 0) return;
    s += k;
    n -= size_t(k);
  }
}

void raw_str(const char* s) { raw_write(s, strlen(s)); }

void raw_uint(uint64_t v) {
  char buf[24];
  int i = 23;
  buf[i] = 0;
  do {
    buf[--i] = char('0' + v % 10);
    v /= 10;
  } while (v > 0);
  raw_str(buf + i);
}

void raw_hex(uint64_t v) {
  char buf[24];
  int i = 23;
  buf[i] = 0;
  do {
    buf[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v > 0);
  buf[--i] = 'x';
  buf[--i] = '0';
  raw_str(buf + i);
}

// ---------------------------------------------------------------------------
// Guarded device buffers.

// A Guarded is one device buffer: [base, base+page) and the last page of the
// mapping are PROT_NONE; data ends 16-byte aligned right against the trailing
// guard; the slack before and after data is filled with a canary pattern.
struct Guarded {
  unsigned char* base = nullptr;  // mapping start
  size_t map_len = 0;
  unsigned char* data = nullptr;
  size_t size = 0;
  unsigned char* head = nullptr;  // first byte of the head slack
  unsigned char* tail_end = nullptr;  // one past the tail slack (= trailing guard)
};

unsigned char canary_byte(uintptr_t addr) {
  return static_cast<unsigned char>(0xA5 ^ (addr * 0x3B) ^ (addr >> 8));
}

void fill_canary(unsigned char* lo, unsigned char* hi) {
  for (unsigned char* p = lo; p < hi; p++) *p = canary_byte(reinterpret_cast<uintptr_t>(p));
}

// first_damage returns the lowest byte in [lo, hi) whose canary changed
// (the address a small out-of-bounds store started at), or nullptr.
unsigned char* first_damage(unsigned char* lo, unsigned char* hi) {
  for (unsigned char* p = lo; p < hi; p++) {
    if (*p != canary_byte(reinterpret_cast<uintptr_t>(p))) return p;
  }
  return nullptr;
}

bool alloc_guarded(Guarded* g, size_t size) {
  size_t pg = page_size();
  size_t padded = round_up(size, 16);
  size_t data_pages = std::max(pg, round_up(padded, pg));
  size_t len = pg + data_pages + pg;
  void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return false;
  unsigned char* base = static_cast<unsigned char*>(m);
  if (mprotect(base + pg, data_pages, PROT_READ | PROT_WRITE) != 0) {
    munmap(m, len);
    return false;
  }
  g->base = base;
  g->map_len = len;
  g->head = base + pg;
  g->tail_end = base + pg + data_pages;
  g->data = g->tail_end - padded;
  g->size = size;
  fill_canary(g->head, g->data);
  fill_canary(g->data + size, g->tail_end);
  return true;
}

void free_guarded(Guarded* g) {
  if (g->base) munmap(g->base, g->map_len);
  *g = Guarded();
}

// ---------------------------------------------------------------------------
// Loaded kernels.

struct Kernel {
  std::string path, name;
  void* so = nullptr;
  const mtl_rt::KernelInfo* info = nullptr;
  std::vector<ptrdiff_t> slot_offset;  // by slot id; -1 when not this kernel's
  size_t static_tg = 0;
  struct Slot {
    int id;
    size_t offset, size;
  };
  std::vector<Slot> slots;
};

// ---------------------------------------------------------------------------
// Fibers and the per-threadgroup scheduler.

enum State : uint8_t {
  kRunnable = 0,
  kAtTGBarrier = 1,
  kAtSimdBarrier = 2,
  kAtExchange = 3,
  kDone = 4,
};

struct Worker;

// A FiberSlot is one thread of the threadgroup being run by a worker. Slots
// and their stacks are reused across threadgroups.
struct FiberSlot {
  mtl_fiber::Fiber fiber;
  unsigned char* stack_map = nullptr;  // mapping start (guard page)
  size_t stack_map_len = 0;
  int index = 0;
  Worker* worker = nullptr;
  mtl_rt::ThreadCtx tc;
  const void* ex_mine = nullptr;
  size_t ex_size = 0;
  void* ex_all = nullptr;
  uint32_t* ex_active = nullptr;
};

// The Job is the dispatch being run, shared read-only by workers.
struct Job {
  const Kernel* kernel = nullptr;
  uint32_t groups[3] = {1, 1, 1};
  uint32_t threads[3] = {1, 1, 1};
  uint8_t order = kInOrder;
  uint64_t seed = 0;
  void* buffers[kMaxBuffers] = {};
  size_t tg_sizes[kMaxBuffers] = {};
  int ntg = 0;  // tgbufs used: indices < ntg
};

struct Worker {
  mtl_fiber::Fiber sched;
  std::vector<FiberSlot*> fibers;
  std::vector<uint8_t> state;
  std::vector<int> order;
  std::vector<FiberSlot*> runlist;  // this phase's fibers, in run order
  size_t runpos = 0;                // next runlist entry to resume
  FiberSlot* cur = nullptr;
  unsigned char* arena = nullptr;
  size_t arena_cap = 0;
  std::vector<unsigned char*> tgmem;
  std::vector<size_t> tgmem_cap;
  void* tgbufs[kMaxBuffers] = {};
  const Job* job = nullptr;
  int nthreads = 0;
  int n_runnable = 0, n_tgbar = 0, n_simdwait = 0, n_done = 0;
  uint32_t group_pos[3] = {0, 0, 0};
  void* altstack = nullptr;
  unsigned char exchange[32 * 512];  // simd_exchange deposits, by lane
};

thread_local Worker* tls_worker = nullptr;

// Dispatch-wide state.
Job g_job;
std::atomic<uint64_t> g_next{0};
std::atomic<bool> g_abort{false};
std::mutex g_err_mu;
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

// Guard regions, registered read-only for the signal handler.
Guarded g_buffers[kMaxBuffers];
bool g_device[kMaxBuffers];
size_t g_tg_size[kMaxBuffers];
bool g_tg_bound[kMaxBuffers];

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

// block parks the running fiber in state s and passes control straight to
// the next fiber of the phase, or back to the scheduler after the last one:
// one context switch per blocking call.
inline void block(uint8_t s) {
  Worker* w = tls_worker;
  FiberSlot* f = w->cur;
  w->state[size_t(f->index)] = s;
  w->n_runnable--;
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
  w->n_done++;
  block(kDone);
  raw_str("runner: finished fiber resumed\n");
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
  int waiting = 0;
  for (int i = lo; i < hi; i++) {
    uint8_t s = w->state[size_t(i)];
    if (s == kAtExchange) {
      mask |= 1u << (i - lo);
      FiberSlot* f = w->fibers[size_t(i)];
      std::memcpy(w->exchange + size_t(i - lo) * kMaxExchange, f->ex_mine, f->ex_size);
    }
    if (s == kAtExchange || s == kAtSimdBarrier) waiting++;
  }
  if (waiting == 0) return;
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
    if (s == kAtExchange || s == kAtSimdBarrier) {
      w->state[size_t(i)] = kRunnable;
      w->n_runnable++;
    }
  }
  w->n_simdwait -= waiting;
}

bool prepare_worker(Worker* w, const Job& job) {
  const Kernel* k = job.kernel;
  int T = int(job.threads[0] * job.threads[1] * job.threads[2]);
  while (int(w->fibers.size()) < T) {
    FiberSlot* f = new_fiber(w, int(w->fibers.size()));
    if (!f) return false;
    w->fibers.push_back(f);
  }
  w->state.assign(size_t(T), kRunnable);
  w->order.resize(size_t(T));
  w->runlist.reserve(size_t(T));
  size_t need = std::max<size_t>(k->static_tg, 16);
  if (w->arena_cap < need) {
    std::free(w->arena);
    w->arena = static_cast<unsigned char*>(std::aligned_alloc(4096, round_up(need, 4096)));
    w->arena_cap = need;
  }
  for (int i = job.ntg; i < kMaxBuffers; i++) w->tgbufs[i] = nullptr;
  if (w->tgmem.size() < size_t(job.ntg)) {
    w->tgmem.resize(size_t(job.ntg), nullptr);
    w->tgmem_cap.resize(size_t(job.ntg), 0);
  }
  for (int i = 0; i < job.ntg; i++) {
    w->tgbufs[i] = nullptr;
    if (job.tg_sizes[i] == 0 && !g_tg_bound[i]) continue;
    size_t n = std::max<size_t>(job.tg_sizes[i], 16);
    if (w->tgmem_cap[size_t(i)] < n) {
      std::free(w->tgmem[size_t(i)]);
      w->tgmem[size_t(i)] = static_cast<unsigned char*>(std::aligned_alloc(64, round_up(n, 64)));
      w->tgmem_cap[size_t(i)] = n;
    }
    w->tgbufs[i] = w->tgmem[size_t(i)];
  }
  w->job = &job;
  w->nthreads = T;
  return true;
}

// run_group runs threadgroup g to completion, or reports a deadlock.
void run_group(Worker* w, uint64_t g) {
  const Job& job = *w->job;
  const uint32_t* G = job.groups;
  const uint32_t* TT = job.threads;
  int T = w->nthreads;
  uint32_t gp[3] = {uint32_t(g % G[0]), uint32_t((g / G[0]) % G[1]), uint32_t(g / (uint64_t(G[0]) * G[1]))};
  std::memcpy(w->group_pos, gp, sizeof gp);
  std::memset(w->arena, 0, w->job->kernel->static_tg);
  for (int i = 0; i < job.ntg; i++) {
    if (w->tgbufs[i]) std::memset(w->tgbufs[i], 0, job.tg_sizes[i]);
  }
  uint32_t simdgroups = uint32_t((T + 31) / 32);
  uint32_t quadgroups = uint32_t((T + 3) / 4);
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
    // Stagger stack tops across a page so that the fibers' hot frames do
    // not all compete for the same L1 cache sets.
    size_t color = size_t((i * 7) % 64) * 64;
    mtl_fiber::init(&f->fiber, f->stack_map + page_size(), kStackSize - color, fiber_entry, f);
    w->state[size_t(i)] = kRunnable;
  }
  w->n_runnable = T;
  w->n_tgbar = 0;
  w->n_simdwait = 0;
  w->n_done = 0;
  uint64_t phase = 0;
  for (;;) {
    if (w->n_runnable > 0) {
      // Only the running fiber changes its own state during a phase, so
      // the fibers runnable now are exactly the ones the phase runs.
      const uint8_t* st = w->state.data();
      FiberSlot* const* fs = w->fibers.data();
      w->runlist.clear();
      switch (job.order) {
        case kInOrder:
          for (int i = 0; i < T; i++)
            if (st[i] == kRunnable) w->runlist.push_back(fs[i]);
          break;
        case kReversed:
          for (int i = T - 1; i >= 0; i--)
            if (st[i] == kRunnable) w->runlist.push_back(fs[i]);
          break;
        default: {
          int* ord = w->order.data();
          for (int i = 0; i < T; i++) ord[i] = i;
          uint64_t x = job.seed ^ (g * 0xD1B54A32D192ED03ull) ^ (phase * 0x8CB92BA72F3D8DD7ull);
          for (int i = T - 1; i > 0; i--) {
            int j = int(splitmix(&x) % uint64_t(i + 1));
            std::swap(ord[i], ord[j]);
          }
          for (int i = 0; i < T; i++)
            if (st[ord[i]] == kRunnable) w->runlist.push_back(fs[ord[i]]);
        }
      }
      run_phase(w);
      phase++;
      continue;
    }
    if (w->n_done == T) return;
    if (w->n_simdwait > 0) {
      for (int sg = 0; sg < int(simdgroups); sg++) release_simd(w, sg);
      continue;
    }
    if (w->n_tgbar == T) {
      for (int i = 0; i < T; i++) w->state[size_t(i)] = kRunnable;
      w->n_runnable = T;
      w->n_tgbar = 0;
      continue;
    }
    char msg[256];
    snprintf(msg, sizeof msg,
             "threadgroup_barrier reached by %d of %d threads of threadgroup (%u,%u,%u); %d returned",
             w->n_tgbar, T, gp[0], gp[1], gp[2], w->n_done);
    set_error(kErrDeadlock, msg);
    return;
  }
}

// ---------------------------------------------------------------------------
// Worker pool.

struct Pool {
  std::vector<Worker*> workers;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::condition_variable cv, done_cv;
  uint64_t generation = 0;
  int running = 0;
  uint64_t ngroups = 0;
};

Pool g_pool;

void install_altstack(Worker* w) {
  w->altstack = std::malloc(kAltStackSize);
  stack_t ss;
  ss.ss_sp = w->altstack;
  ss.ss_size = kAltStackSize;
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
}

void worker_main(Worker* w) {
  tls_worker = w;
  install_altstack(w);
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
      set_error(kErrOther, "cannot allocate fiber stacks");
    }
    {
      std::lock_guard<std::mutex> lock(g_pool.mu);
      if (--g_pool.running == 0) g_pool.done_cv.notify_all();
    }
  }
}

void start_pool(int n) {
  for (int i = 0; i < n; i++) {
    Worker* w = new Worker();
    g_pool.workers.push_back(w);
    g_pool.threads.emplace_back(worker_main, w);
    g_pool.threads.back().detach();
  }
}

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

// ---------------------------------------------------------------------------
// Fault handling.

void on_fault(int sig, siginfo_t* si, void*) {
  uintptr_t addr = reinterpret_cast<uintptr_t>(si->si_addr);
  if (sig == SIGSEGV || sig == SIGBUS) {
    for (int i = 0; i < kMaxBuffers; i++) {
      const Guarded& g = g_buffers[i];
      if (!g.base) continue;
      uintptr_t lo = reinterpret_cast<uintptr_t>(g.base);
      uintptr_t hi = lo + g.map_len;
      if (addr < lo || addr >= hi) continue;
      uintptr_t data = reinterpret_cast<uintptr_t>(g.data);
      raw_str("bad access: buffer ");
      raw_uint(uint64_t(i));
      if (addr >= data) {
        raw_str(", byte offset +");
        raw_uint(addr - (data + g.size));
        raw_str(" past the end (size ");
      } else {
        raw_str(", byte offset -");
        raw_uint(data - addr);
        raw_str(" before the start (size ");
      }
      raw_uint(g.size);
      raw_str(")\n");
      _exit(kExitBadAccess);
    }
  }
  const char* name = "signal";
  switch (sig) {
    case SIGSEGV: name = "SIGSEGV"; break;
    case SIGBUS: name = "SIGBUS"; break;
    case SIGFPE: name = "SIGFPE"; break;
    case SIGILL: name = "SIGILL"; break;
    case SIGABRT: name = "SIGABRT (abort)"; break;
    case SIGTRAP: name = "SIGTRAP"; break;
  }
  raw_str("crash: ");
  raw_str(name);
  if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) {
    raw_str(" at address ");
    raw_hex(addr);
  }
  Worker* w = tls_worker;
  if (w && w->cur) {
    FiberSlot* f = w->cur;
    uintptr_t slo = reinterpret_cast<uintptr_t>(f->stack_map);
    if ((sig == SIGSEGV || sig == SIGBUS) && addr >= slo && addr < slo + page_size()) {
      raw_str(" (stack overflow)");
    }
    raw_str(" in thread ");
    raw_uint(f->index);
    raw_str(" of threadgroup (");
    raw_uint(w->group_pos[0]);
    raw_str(",");
    raw_uint(w->group_pos[1]);
    raw_str(",");
    raw_uint(w->group_pos[2]);
    raw_str(")");
  }
  raw_str("\n");
  _exit(kExitCrash);
}

void install_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
  for (int s : sigs) sigaction(s, &sa, nullptr);
}

// ---------------------------------------------------------------------------
// Protocol I/O.

int g_out = 1;

[[noreturn]] void protocol_exit(const char* why) {
  raw_str("runner: ");
  raw_str(why);
  raw_str("\n");
  _exit(kExitProtocol);
}

bool read_full(void* p, size_t n) {
  unsigned char* b = static_cast<unsigned char*>(p);
  while (n > 0) {
    ssize_t k = read(0, b, n);
    if (k == 0) return false;
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    b += k;
    n -= size_t(k);
  }
  return true;
}

void write_full(const void* p, size_t n) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  while (n > 0) {
    ssize_t k = write(g_out, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) protocol_exit("write to metalab failed");
    b += k;
    n -= size_t(k);
  }
}

// A Reader decodes one request payload.
struct Reader {
  const unsigned char* p;
  const unsigned char* end;
  bool ok = true;
  template <typename T>
  T get() {
    T v{};
    if (size_t(end - p) < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::string str() {
    uint32_t n = get<uint32_t>();
    if (!ok || size_t(end - p) < n) {
      ok = false;
      return std::string();
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
};

// A Writer encodes one reply payload.
struct Writer {
  std::vector<unsigned char> b;
  template <typename T>
  void put(T v) {
    size_t n = b.size();
    b.resize(n + sizeof(T));
    std::memcpy(b.data() + n, &v, sizeof(T));
  }
  void bytes(const void* p, size_t n) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    b.insert(b.end(), c, c + n);
  }
};

void send(uint8_t type, const void* payload, size_t n) {
  unsigned char hdr[5];
  uint32_t len = uint32_t(n);
  std::memcpy(hdr, &len, 4);
  hdr[4] = type;
  write_full(hdr, 5);
  if (n) write_full(payload, n);
}

void send_ok(const Writer& w) { send(kOK, w.b.data(), w.b.size()); }

void send_err(uint8_t kind, const std::string& msg) {
  Writer w;
  w.put<uint8_t>(kind);
  w.put<uint32_t>(uint32_t(msg.size()));
  w.bytes(msg.data(), msg.size());
  send(kErr, w.b.data(), w.b.size());
}

// ---------------------------------------------------------------------------
// Requests.

std::vector<Kernel*> g_kernels;

void do_load(Reader& r) {
  std::string path = r.str();
  std::string name = r.str();
  if (!r.ok) return send_err(kErrUsage, "malformed LOAD");
  void* so = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!so) return send_err(kErrOther, std::string("dlopen: ") + dlerror());
  auto table = reinterpret_cast<const mtl_rt::KernelInfo* (*)(int*)>(dlsym(so, "mtl_kernels"));
  if (!table) return send_err(kErrOther, path + ": no mtl_kernels symbol");
  int n = 0;
  const mtl_rt::KernelInfo* infos = table(&n);
  const mtl_rt::KernelInfo* info = nullptr;
  std::string names;
  for (int i = 0; i < n; i++) {
    if (name == infos[i].name) info = &infos[i];
    names += (names.empty() ? "" : ", ") + std::string(infos[i].name);
  }
  if (!info) return send_err(kErrUsage, "kernel " + name + " not found in " + path + " (has: " + names + ")");
  Kernel* k = new Kernel();
  k->path = path;
  k->name = name;
  k->so = so;
  k->info = info;
  size_t off = 0;
  int max_id = -1;
  for (int i = 0; i < info->nslots; i++) {
    const mtl_rt::TGSlot& s = info->slots[i];
    if (s.id < 0 || s.id > 1 << 20) return send_err(kErrUsage, "bad threadgroup slot id " + std::to_string(s.id));
    size_t a = s.align ? s.align : 1;
    if (a & (a - 1)) return send_err(kErrUsage, "threadgroup slot " + std::string(s.name ? s.name : "?") + " has alignment " + std::to_string(a) + ", not a power of two");
    off = round_up(off, a);
    k->slots.push_back({s.id, off, s.size});
    off += s.size;
    max_id = std::max(max_id, s.id);
    if (a > 4096) return send_err(kErrUsage, "threadgroup slot alignment " + std::to_string(a) + " exceeds 4096");
  }
  k->static_tg = round_up(off, 16);
  k->slot_offset.assign(size_t(max_id + 1), -1);
  for (const auto& s : k->slots) k->slot_offset[size_t(s.id)] = ptrdiff_t(s.offset);
  g_kernels.push_back(k);
  Writer w;
  w.put<uint32_t>(uint32_t(g_kernels.size() - 1));
  w.put<uint64_t>(k->static_tg);
  w.put<uint32_t>(uint32_t(std::min(info->max_threads > 0 ? info->max_threads : kMaxThreads, kMaxThreads)));
  w.put<uint32_t>(uint32_t(k->slots.size()));
  for (const auto& s : k->slots) {
    w.put<int32_t>(s.id);
    w.put<uint64_t>(s.offset);
    w.put<uint64_t>(s.size);
  }
  send_ok(w);
}

void do_buffer(Reader& r) {
  uint32_t index = r.get<uint32_t>();
  uint8_t kind = r.get<uint8_t>();
  uint64_t size = r.get<uint64_t>();
  uint8_t has = r.get<uint8_t>();
  if (!r.ok || index >= kMaxBuffers) return send_err(kErrUsage, "malformed BUFFER");
  if (has && uint64_t(r.end - r.p) < size) return send_err(kErrUsage, "BUFFER data shorter than its size");
  if (kind == kThreadgroup) {
    g_tg_size[index] = size_t(size);
    g_tg_bound[index] = true;
    return send_ok(Writer());
  }
  free_guarded(&g_buffers[index]);
  g_device[index] = false;
  if (!alloc_guarded(&g_buffers[index], size_t(size))) {
    return send_err(kErrOther, "cannot map buffer " + std::to_string(index) + " of " + std::to_string(size) + " bytes");
  }
  g_device[index] = true;
  if (has) std::memcpy(g_buffers[index].data, r.p, size_t(size));
  send_ok(Writer());
}

void do_read(Reader& r) {
  uint32_t index = r.get<uint32_t>();
  if (!r.ok || index >= kMaxBuffers || !g_device[index]) return send_err(kErrUsage, "READ of an unbound buffer");
  send(kOK, g_buffers[index].data, g_buffers[index].size);
}

void do_reset() {
  for (int i = 0; i < kMaxBuffers; i++) {
    free_guarded(&g_buffers[i]);
    g_device[i] = false;
    g_tg_size[i] = 0;
    g_tg_bound[i] = false;
  }
  send_ok(Writer());
}

// check_canaries reports the first buffer whose slack was written.
bool check_canaries(std::string* msg) {
  for (int i = 0; i < kMaxBuffers; i++) {
    Guarded& g = g_buffers[i];
    if (!g.base) continue;
    unsigned char* end = g.data + g.size;
    // A stored byte that happens to equal the canary goes unseen, so the
    // damage is reported by 4-byte word (offsets from the buffer's ends):
    // the word that holds the first changed byte.
    if (unsigned char* p = first_damage(end, g.tail_end)) {
      *msg = "bad access: buffer " + std::to_string(i) + ", byte offset +" + std::to_string((p - end) / 4 * 4) +
             " past the end (size " + std::to_string(g.size) + "; canary overwritten)";
      return false;
    }
    if (unsigned char* p = first_damage(g.head, g.data)) {
      *msg = "bad access: buffer " + std::to_string(i) + ", byte offset -" + std::to_string((g.data - p + 3) / 4 * 4) +
             " before the start (size " + std::to_string(g.size) + "; canary overwritten)";
      return false;
    }
  }
  return true;
}

void do_dispatch(Reader& r) {
  uint32_t handle = r.get<uint32_t>();
  uint32_t groups[3], threads[3];
  for (auto& v : groups) v = r.get<uint32_t>();
  for (auto& v : threads) v = r.get<uint32_t>();
  uint32_t repeat = r.get<uint32_t>();
  uint8_t order = r.get<uint8_t>();
  uint64_t seed = r.get<uint64_t>();
  if (!r.ok || handle >= g_kernels.size()) return send_err(kErrUsage, "malformed DISPATCH");
  const Kernel* k = g_kernels[handle];
  uint64_t T = uint64_t(threads[0]) * threads[1] * threads[2];
  int max_threads = std::min(k->info->max_threads > 0 ? k->info->max_threads : kMaxThreads, kMaxThreads);
  if (T == 0 || T > uint64_t(max_threads)) {
    return send_err(kErrUsage, "threads per threadgroup " + std::to_string(threads[0]) + "x" + std::to_string(threads[1]) + "x" +
                                   std::to_string(threads[2]) + " outside 1.." + std::to_string(max_threads));
  }
  uint64_t ngroups = uint64_t(groups[0]) * groups[1] * groups[2];
  if (groups[0] > (1u << 31) || groups[1] > (1u << 31) || groups[2] > (1u << 31) || ngroups > (uint64_t(1) << 40)) {
    return send_err(kErrUsage, "grid of " + std::to_string(groups[0]) + "x" + std::to_string(groups[1]) + "x" +
                                   std::to_string(groups[2]) + " threadgroups is too large");
  }
  g_job = Job();
  g_job.kernel = k;
  std::memcpy(g_job.groups, groups, sizeof groups);
  std::memcpy(g_job.threads, threads, sizeof threads);
  g_job.order = order;
  g_job.seed = seed;
  for (int i = 0; i < kMaxBuffers; i++) {
    g_job.buffers[i] = g_device[i] ? g_buffers[i].data : nullptr;
    if (g_tg_bound[i]) {
      g_job.tg_sizes[i] = g_tg_size[i];
      g_job.ntg = i + 1;
    }
  }
  Writer w;
  w.put<uint32_t>(repeat);
  for (uint32_t rep = 0; rep < repeat; rep++) {
    {
      std::lock_guard<std::mutex> lock(g_err_mu);
      g_err.clear();
    }
    auto t0 = std::chrono::steady_clock::now();
    if (ngroups > 0) run_dispatch(ngroups);
    auto t1 = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(g_err_mu);
      if (!g_err.empty()) return send_err(g_err_kind, g_err);
    }
    std::string msg;
    if (!check_canaries(&msg)) return send_err(kErrBadAccess, msg);
    w.put<uint64_t>(uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
  }
  send_ok(w);
}

}  // namespace

// ---------------------------------------------------------------------------
// The mtl_rt ABI, exported to loaded kernels (the runner links with -rdynamic).

namespace mtl_rt {

const ThreadCtx& ctx() { return tls_worker->cur->tc; }

void threadgroup_barrier() {
  Worker* w = tls_worker;
  w->n_tgbar++;
  block(kAtTGBarrier);
}

void simdgroup_barrier() {
  Worker* w = tls_worker;
  w->n_simdwait++;
  block(kAtSimdBarrier);
}

void simd_exchange(const void* mine, size_t size, void* all, uint32_t* active) {
  Worker* w = tls_worker;
  FiberSlot* f = w->cur;
  if (size > kMaxExchange) {
    raw_str("crash: simd_exchange of more than 512 bytes\n");
    _exit(mtl_proto::kExitCrash);
  }
  f->ex_mine = mine;
  f->ex_size = size;
  f->ex_all = all;
  f->ex_active = active;
  w->n_simdwait++;
  block(kAtExchange);
}

void* tg_slot(int slot) {
  Worker* w = tls_worker;
  const Kernel* k = w->job->kernel;
  if (slot < 0 || size_t(slot) >= k->slot_offset.size() || k->slot_offset[size_t(slot)] < 0) {
    raw_str("crash: tg_slot(");
    raw_uint(uint64_t(slot < 0 ? 0 : slot));
    raw_str(") is not in the kernel's threadgroup slot table\n");
    _exit(mtl_proto::kExitCrash);
  }
  return w->arena + k->slot_offset[size_t(slot)];
}

}  // namespace mtl_rt

int main(int argc, char** argv) {
  int workers = int(std::thread::hardware_concurrency());
  for (int i = 1; i + 1 < argc; i++) {
    if (std::strcmp(argv[i], "-workers") == 0) workers = std::atoi(argv[i + 1]);
  }
  if (workers <= 0) workers = 1;
  // Keep the protocol on a private descriptor so stray output from a kernel
  // lands on stderr instead of corrupting replies.
  g_out = dup(1);
  dup2(2, 1);
  signal(SIGPIPE, SIG_IGN);
  install_handlers();
  {
    stack_t ss;
    ss.ss_sp = std::malloc(kAltStackSize);
    ss.ss_size = kAltStackSize;
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
  }
  start_pool(workers);
  // Exit when metalab goes away, even while a kernel spins forever.
  pid_t parent = getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (getppid() != parent) _exit(0);
    }
  }).detach();
  std::vector<unsigned char> payload;
  for (;;) {
    unsigned char hdr[5];
    if (!read_full(hdr, 5)) _exit(0);  // metalab closed the pipe
    uint32_t len;
    std::memcpy(&len, hdr, 4);
    payload.resize(len);
    if (len && !read_full(payload.data(), len)) protocol_exit("truncated request");
    Reader r{payload.data(), payload.data() + len};
    switch (hdr[4]) {
      case kLoad: do_load(r); break;
      case kBuffer: do_buffer(r); break;
      case kDispatch: do_dispatch(r); break;
      case kRead: do_read(r); break;
      case kReset: do_reset(); break;
      default: send_err(kErrUsage, "unknown request type " + std::to_string(hdr[4]));
    }
  }
}
