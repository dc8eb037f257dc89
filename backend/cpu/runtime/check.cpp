// check.cpp — the checking mode: every memory access a kernel makes is
// checked against Metal's rules, deterministically.
//
// Kernels built for checking are compiled with GCC/Clang's ThreadSanitizer
// instrumentation (-fsanitize=thread) and array-bounds instrumentation
// (-fsanitize=bounds) but linked without their runtimes: the runner exports
// the __tsan_* and __ubsan_* entry points itself and implements Metal's
// memory model in them instead of C++'s. ThreadSanitizer's own runtime
// would need every barrier and collective annotated, samples only a few
// accesses per 8 bytes, and has no notion of simd groups or uninitialised
// threadgroup memory; its compiler pass, which calls a hook before every
// load and store with the address and size, is exactly what we need.
//
// Rules (per byte):
//   - bounds: an access outside the buffer or array its address region
//     belongs to is fatal (the address layout puts every buffer and
//     threadgroup array in a region of its own, see memory.cpp);
//   - uninitialised: reading threadgroup memory no thread of this
//     threadgroup has written;
//   - race: two accesses in one interval (between barriers that order the
//     memory) by threads of different simd groups, at least one a write, not
//     both atomic; on device memory, any two such accesses of different
//     threadgroups in one dispatch;
//   - lockstep: the same by two lanes of one simd group with no simd-group
//     barrier or collective between them (a warning: it relies on lanes
//     executing in lockstep).
// Two kinds of race are named for what they are, because real kernels live
// with them: a race on threadgroup memory whose accesses a threadgroup
// barrier without mem_threadgroup separates (mem-none-order: an execution
// barrier orders the threads, not the memory), and two writes of the same
// bytes (same-value-write: the later store leaves the bytes as the earlier
// left them, judged once the store is done, at the worker's next hook).
// Threadgroup memory of checking builds starts poisoned 0x5a, that of plain
// builds 0xff: a baseline whose unwritten reads leave its bytes the same
// under both reads nothing that reaches an output (check compares them).
// Each byte keeps its last write and up to two reads of the interval, chosen
// so that a conflicting access is never missed: the second read is kept
// from another simd group (or threadgroup) than the first.
#include <sys/mman.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "runner.h"

using namespace mtl_proto;

namespace runner {

namespace {

constexpr uint16_t kAtomicBit = 0x8000;
constexpr uint16_t kThreadMask = 0x7fff;
constexpr size_t kMaxFindings = 64;

// kCheckPoison is the byte the checking build's threadgroup memory starts
// as (the plain build's is 0xff, see sched.cpp).
constexpr unsigned char kCheckPoison = 0x5a;

// Acc is one recorded access to a threadgroup byte; ep 0 means none.
struct Acc {
  uint32_t ep;
  uint16_t thread;  // thread index in threadgroup | kAtomicBit
  uint16_t sgep;    // the simd group's collective count at the access
  uint32_t pc;
  uint32_t xep;     // threadgroup barriers (of any mem_flags) the threadgroup had passed
};

// t_xep counts the threadgroup barriers the worker's current threadgroup
// has passed, whatever their mem_flags: two accesses of one interval with
// different counts are ordered by an execution barrier only.
thread_local uint32_t t_xep = 0;

// DAcc is one recorded access to a device byte; group 0 means none.
struct DAcc {
  uint32_t group;  // linear threadgroup index + 1
  uint32_t ep;
  uint16_t thread;
  uint16_t sgep;
  uint32_t pc;
};

std::mutex g_find_mu;
std::vector<Finding> g_findings;
bool g_fatal = false;

// Device shadow cells are shared by the workers: accesses to them take one
// of these locks, chosen by address.
constexpr size_t kStripes = 4096;
std::atomic<bool> g_stripe[kStripes];

struct StripeLock {
  std::atomic<bool>* l;
  explicit StripeLock(uintptr_t a) : l(&g_stripe[(a >> 4) & (kStripes - 1)]) {
    while (l->exchange(true, std::memory_order_acquire)) {
    }
  }
  ~StripeLock() { l->store(false, std::memory_order_release); }
};

uint32_t pc_of(const Kernel* k, uintptr_t ret) {
  if (!k || ret < k->so_base) return 0;
  uintptr_t d = ret - k->so_base;
  return d > 0xffffffffu ? 0 : uint32_t(d);
}

void fill_group(uint32_t out[3], uint64_t linear) {
  const uint32_t* G = g_job.groups;
  out[0] = uint32_t(linear % G[0]);
  out[1] = uint32_t((linear / G[0]) % G[1]);
  out[2] = uint32_t(linear / (uint64_t(G[0]) * G[1]));
}

Access me_access(Worker* w, bool write, bool atomic, uint32_t pc) {
  Access a;
  a.valid = true;
  a.write = write;
  a.atomic = atomic;
  std::memcpy(a.group, w->group_pos, sizeof a.group);
  a.thread = uint32_t(w->cur->index);
  a.pc = pc;
  return a;
}

void add(Finding f);

// A PendingWrite is a write that conflicts with an earlier write of the
// interval, judged once the store is done: if the bytes are what they were
// before it (what the earlier write left), it is a same-value write, else
// the conflict's own kind. A worker runs one fiber at a time and a store
// follows its hook before any other hook or scheduler call, so the next
// hook on the worker (or the end of the interval) sees the store done.
struct PendingWrite {
  bool active = false;
  Finding f;
  unsigned char* addr = nullptr;
  size_t n = 0;
  unsigned char before[16];
};
thread_local PendingWrite t_write;

void settle_write() {
  if (!t_write.active) return;
  t_write.active = false;
  if (std::memcmp(t_write.addr, t_write.before, t_write.n) == 0) t_write.f.kind = kFindSameValue;
  add(std::move(t_write.f));
}

// add records f, or counts it when one with the same kind, place and pcs
// was recorded. A fatal finding stops the dispatch.
void add(Finding f) {
  std::lock_guard<std::mutex> lock(g_find_mu);
  for (Finding& g : g_findings) {
    if (g.kind == f.kind && g.space == f.space && g.buffer == f.buffer && g.a.pc == f.a.pc && g.b.pc == f.b.pc &&
        g.a.line == f.a.line && g.a.file == f.a.file) {
      if (g.count < 0xffffffffu) g.count++;
      if (f.fatal) g_fatal = true;
      return;
    }
  }
  if (f.fatal) g_fatal = true;
  if (g_findings.size() < kMaxFindings || f.fatal) g_findings.push_back(std::move(f));
}

const char* array_name(const Worker* w, const TGArray& a) {
  if (a.space == kSpaceThreadgroup) {
    for (const auto& s : w->job->kernel->slots)
      if (s.id == a.id && s.desc && s.desc->name) return s.desc->name;
  }
  return "";
}

[[noreturn]] void fatal_bounds(Worker* w, uint8_t space, int32_t buffer, const char* name, int64_t offset, size_t n,
                               bool write, uint32_t pc, const std::string& note) {
  Finding f;
  f.kind = kFindBounds;
  f.space = space;
  f.fatal = true;
  f.buffer = buffer;
  f.name = name ? name : "";
  f.offset = offset;
  f.size = uint32_t(n);
  f.a = me_access(w, write, false, pc);
  f.note = note;
  add(std::move(f));
  kill_current_fiber();
}

// kind_of returns the finding kind of a conflict between the current
// access (thread t of simd group sg at sgep) and a recorded one, or 0.
inline uint8_t conflict(uint16_t rec_thread, uint16_t rec_sgep, int t, int sg, uint16_t sgep, bool atomic) {
  int ot = rec_thread & kThreadMask;
  if (ot == t) return 0;
  if ((rec_thread & kAtomicBit) && atomic) return 0;
  if (ot / 32 != sg) return kFindRace;
  if (rec_sgep == sgep) return kFindLockstep;
  return 0;
}

// report_conflict reports a conflict of the current access (at addr, n
// bytes) with a recorded one. A write after a write of another simd group,
// neither atomic, is judged after the store (see PendingWrite); one pending
// write per access. Lanes of one simd group are a lockstep warning either
// way.
void report_conflict(Worker* w, uint8_t kind, uint8_t space, int32_t buffer, const char* name, int64_t offset,
                     size_t n, bool write, bool atomic, uint32_t pc, bool other_write, bool other_atomic,
                     uint64_t other_group, int other_thread, uint32_t other_pc, unsigned char* addr) {
  Finding f;
  f.kind = kind;
  f.space = space;
  f.buffer = buffer;
  f.name = name ? name : "";
  f.offset = offset;
  f.size = uint32_t(n);
  f.a = me_access(w, write, atomic, pc);
  f.b.valid = true;
  f.b.write = other_write;
  f.b.atomic = other_atomic;
  fill_group(f.b.group, other_group);
  f.b.thread = uint32_t(other_thread);
  f.b.pc = other_pc;
  if ((kind == kFindRace || kind == kFindMemNone) && space != kSpaceDevice && w->unfenced_line > 0) {
    f.note = "a threadgroup_barrier at line " + std::to_string(w->unfenced_line) +
             " does not order threadgroup memory (mem_flags without mem_threadgroup)";
  }
  if (write && other_write && !atomic && !other_atomic && kind != kFindLockstep && addr && n <= sizeof t_write.before) {
    if (t_write.active) {
      if (t_write.addr == addr) return;  // another byte of the same access
      settle_write();
    }
    t_write.active = true;
    t_write.f = std::move(f);
    t_write.addr = addr;
    t_write.n = n;
    std::memcpy(t_write.before, addr, n);
    return;
  }
  add(std::move(f));
}

// kPoisonRead marks a byte whose uninitialised read is pending or was
// reported, so it is reported once and conflicts with nothing.
constexpr uint16_t kPoisonRead = kThreadMask;

// A PendingUninit is a read of threadgroup memory no thread had written,
// judged when its interval ends: if another thread wrote the byte in the
// same interval, the read and that write conflict (a race, or with lanes of
// one simd group, lockstep — both already reported); otherwise it is an
// uninitialised read.
struct PendingUninit {
  TGArray* array;
  size_t off, n;
  Access access;
};
thread_local std::vector<PendingUninit> t_pending;

// tg_access checks an access of n bytes at offset off of threadgroup array a.
void tg_access(Worker* w, TGArray& a, size_t off, size_t n, bool write, bool read, bool atomic, uint32_t pc) {
  FiberSlot* me = w->cur;
  int t = me->index, sg = me->sg;
  uint16_t sgep = w->sg_ep[size_t(sg)];
  uint32_t ep = w->ep_tg;
  uint32_t xep = t_xep;
  Acc mine{ep, uint16_t(uint16_t(t) | (atomic ? kAtomicBit : 0)), sgep, pc, xep};
  Acc* cells = reinterpret_cast<Acc*>(a.shadow);
  unsigned char* base = static_cast<unsigned char*>(a.data) + off;
  // A race between accesses an execution barrier separates is mem-none-order.
  auto named = [xep](uint8_t k, const Acc& r) { return k == kFindRace && r.xep != xep ? kFindMemNone : k; };
  bool uninit = false;
  for (size_t i = 0; i < n; i++) {
    // A read of a padding byte (a struct copied whole) reads no value: it
    // is neither unwritten nor a conflict. Writes of padding are recorded
    // as any write.
    if (a.pad && !write && a.pad[(off + i) % a.pad_elem]) continue;
    Acc* c = cells + (off + i) * 3;
    Acc& wr = c[0];
    Acc& r1 = c[1];
    Acc& r2 = c[2];
    if (read && wr.ep < w->tg_base) {
      if (!uninit) {
        uninit = true;  // one report per access, not per byte
        t_pending.push_back(PendingUninit{&a, off + i, n, me_access(w, write, atomic, pc)});
      }
      wr = Acc{ep, kPoisonRead, 0, 0, xep};
    } else if (wr.ep == ep && (wr.thread & kThreadMask) != kPoisonRead) {
      if (uint8_t k = conflict(wr.thread, wr.sgep, t, sg, sgep, atomic))
        report_conflict(w, named(k, wr), uint8_t(a.space), a.id, array_name(w, a), int64_t(off + i), n, write, atomic,
                        pc, true, wr.thread & kAtomicBit, w->group_linear, wr.thread & kThreadMask, wr.pc, base);
    }
    if (write) {
      for (Acc* r : {&r1, &r2}) {
        if (r->ep != ep) continue;
        if (uint8_t k = conflict(r->thread, r->sgep, t, sg, sgep, atomic))
          report_conflict(w, named(k, *r), uint8_t(a.space), a.id, array_name(w, a), int64_t(off + i), n, true,
                          atomic, pc, false, r->thread & kAtomicBit, w->group_linear, r->thread & kThreadMask, r->pc,
                          base);
      }
      wr = mine;
      continue;
    }
    int t1 = r1.thread & kThreadMask, t2 = r2.thread & kThreadMask;
    if (r1.ep != ep || t1 == t) {
      if (r1.ep != ep) r2.ep = 0;
      r1 = mine;
    } else if (r2.ep != ep || t2 == t || (t2 / 32 == t1 / 32 && t1 / 32 != sg)) {
      r2 = mine;
    }
  }
}

// dev_conflict reports whether a recorded device access conflicts with the
// current one: any other threadgroup, or the same threadgroup in the same
// interval as for threadgroup memory.
inline uint8_t dev_conflict(const DAcc& r, uint32_t group, uint32_t ep, int t, int sg, uint16_t sgep, bool atomic) {
  if (r.group == 0) return 0;
  if (r.group != group) {
    if ((r.thread & kAtomicBit) && atomic) return 0;
    return kFindRace;
  }
  if (r.ep != ep) return 0;
  return conflict(r.thread, r.sgep, t, sg, sgep, atomic);
}

void dev_access(Worker* w, int index, DevBuf& b, size_t off, size_t n, bool write, bool atomic,
                uint32_t pc) {
  FiberSlot* me = w->cur;
  int t = me->index, sg = me->sg;
  uint16_t sgep = w->sg_ep[size_t(sg)];
  uint32_t ep = w->ep_dev;
  uint32_t group = uint32_t(w->group_linear + 1);
  DAcc mine{group, ep, uint16_t(uint16_t(t) | (atomic ? kAtomicBit : 0)), sgep, pc};
  auto same_thread = [&](const DAcc& r) { return r.group == group && (r.thread & kThreadMask) == t; };
  auto cls = [](const DAcc& r) { return (uint64_t(r.group) << 32) | uint32_t((r.thread & kThreadMask) / 32); };
  uint64_t my_cls = (uint64_t(group) << 32) | uint32_t(sg);
  DAcc* cells = reinterpret_cast<DAcc*>(b.shadow);
  for (size_t i = 0; i < n; i++) {
    DAcc* c = cells + (off + i) * 3;
    StripeLock lock(reinterpret_cast<uintptr_t>(c));
    DAcc& wr = c[0];
    DAcc& r1 = c[1];
    DAcc& r2 = c[2];
    auto rep = [&](uint8_t k, const DAcc& r, bool other_write) {
      report_conflict(w, k, kSpaceDevice, index, "", int64_t(off + i), n, write, atomic, pc, other_write,
                      r.thread & kAtomicBit, uint64_t(r.group - 1), r.thread & kThreadMask, r.pc,
                      static_cast<unsigned char*>(b.data) + off);
    };
    if (uint8_t k = dev_conflict(wr, group, ep, t, sg, sgep, atomic)) rep(k, wr, true);
    if (write) {
      for (DAcc* r : {&r1, &r2})
        if (uint8_t k = dev_conflict(*r, group, ep, t, sg, sgep, atomic)) rep(k, *r, false);
      wr = mine;
    } else if (r1.group == 0 || same_thread(r1) || (r1.group == group && r1.ep != ep)) {
      // An empty slot, or a read of this threadgroup from an earlier
      // interval: this read is newer and stands for the threadgroup.
      r1 = mine;
    } else if (r2.group == 0 || same_thread(r2) || (r2.group == group && r2.ep != ep) ||
               (r2.group == r1.group && group != r1.group) || (cls(r2) == cls(r1) && my_cls != cls(r1))) {
      // Keep a second read from another threadgroup, else from another
      // simd group, than the first.
      r2 = mine;
    }
  }
}

// private_write stops a store of n bytes at addr, outside the buffers and
// threadgroup memory, unless it lies in the running thread's own stack.
void private_write(uintptr_t addr, size_t n, uintptr_t ret) {
  Worker* w = tls_worker;
  if (!w || !w->cur || !w->job) return;
  const FiberSlot* f = w->cur;
  uintptr_t lo = reinterpret_cast<uintptr_t>(f->stack_map);
  if (addr >= lo && addr - lo <= f->stack_map_len && n <= f->stack_map_len - (addr - lo)) return;
  fatal_bounds(w, kSpaceOutside, -1, "", int64_t(addr), n, true, pc_of(w->job->kernel, ret),
               "a write outside every buffer, threadgroup array and the thread's own stack (a forged pointer)");
}

// on_access checks one access of n bytes at addr; ret is the return
// address of the hook, inside the kernel's code.
void on_access(uintptr_t addr, size_t n, bool write, bool read, bool atomic, uintptr_t ret) {
  settle_write();  // the store of the previous hook's access is done
  const Layout& L = g_layout;
  if (addr - L.lo >= L.span) {
    // Thread-private memory or the kernel's own constants. A kernel writes
    // nothing else outside its buffers and threadgroup memory (Metal has no
    // writable program-scope variables): a store anywhere but the thread's
    // own stack would reach the runner's state, this checker's included,
    // and is stopped before it happens.
    if (write) private_write(addr, n, ret);
    return;
  }
  Worker* w = tls_worker;
  if (!w || !w->cur || !w->job) return;
  const Kernel* k = w->job->kernel;
  uint32_t pc = pc_of(k, ret);
  if (n == 0) return;
  if (addr < L.tg_lo) {
    int region = int((addr - L.dev_lo) >> L.dev_shift);
    int index = g_region_owner[region];
    if (index < 0) index = nearest_buffer(addr);
    if (index < 0) fatal_bounds(w, kSpaceDevice, -1, "", 0, n, write, pc, "the address is in no bound buffer");
    DevBuf& b = g_dev[index];
    uintptr_t lo = reinterpret_cast<uintptr_t>(b.data);
    if (addr < lo || addr + n > lo + b.size) {
      fatal_bounds(w, kSpaceDevice, index, "", int64_t(addr) - int64_t(lo), n, write, pc, "");
    }
    if (b.shadow) dev_access(w, index, b, addr - lo, n, write, atomic, pc);
    return;
  }
  uintptr_t idx = (addr - L.tg_lo) >> L.tg_shift;
  int owner = int(idx / kMaxTGSlots), slot = int(idx % kMaxTGSlots);
  if (owner != w->id || slot >= w->narrays) {
    fatal_bounds(w, kSpaceThreadgroup, -1, "", 0, n, write, pc,
                 owner != w->id ? "the address is in another threadgroup's threadgroup memory" : "the address is in no threadgroup array");
  }
  TGArray& a = w->arrays[slot];
  uintptr_t lo = reinterpret_cast<uintptr_t>(a.data);
  if (addr < lo || addr + n > lo + a.size) {
    fatal_bounds(w, uint8_t(a.space), a.id, array_name(w, a), int64_t(addr) - int64_t(lo), n, write, pc, "");
  }
  if (a.shadow) tg_access(w, a, addr - lo, n, write, read, atomic, pc);
}

}  // namespace

void check_end_interval(Worker* w) {
  settle_write();
  for (const PendingUninit& p : t_pending) {
    const Acc& wr = reinterpret_cast<const Acc*>(p.array->shadow)[p.off * 3];
    int writer = wr.thread & kThreadMask;
    if (writer != kPoisonRead && writer != int(p.access.thread)) continue;  // a conflict, reported as one
    Finding f;
    f.kind = kFindUninit;
    f.space = uint8_t(p.array->space);
    f.buffer = p.array->id;
    f.name = array_name(w, *p.array);
    f.offset = int64_t(p.off);
    f.size = uint32_t(p.n);
    f.a = p.access;
    add(std::move(f));
  }
  t_pending.clear();
}

void check_begin_dispatch(const Job& job) {
  {
    std::lock_guard<std::mutex> lock(g_find_mu);
    g_findings.clear();
    g_fatal = false;
  }
  if (!job.kernel->checking) return;
  // Device shadows start empty each dispatch; the pages come back zeroed.
  for (int i = 0; i < kMaxBuffers; i++) {
    DevBuf& b = g_dev[i];
    if (!b.bound) continue;
    b.writable = job.kernel->writable[i];
    if (!b.writable) continue;
    size_t need = round_up(std::max<size_t>(b.size, 1) * sizeof(DAcc) * 3, page_size());
    if (!b.shadow) {
      void* m = mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (m == MAP_FAILED) continue;  // unchecked rather than failed: reported as no finding
      b.shadow = static_cast<DevCell*>(m);
      b.shadow_len = need;
    } else {
      madvise(b.shadow, b.shadow_len, MADV_DONTNEED);
    }
  }
}

void check_prepare_array(TGArray* a) {
  if (!g_job.kernel || !g_job.kernel->checking) return;
  size_t need = std::max<size_t>(a->size, 1) * sizeof(Acc) * 3;
  if (a->shadow_cap < need) {
    if (a->shadow) munmap(a->shadow, a->shadow_cap);
    void* m = mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    a->shadow = m == MAP_FAILED ? nullptr : static_cast<TGCell*>(m);
    a->shadow_cap = a->shadow ? need : 0;
  }
}

void check_begin_group(Worker* w) {
  // A new threadgroup starts a new interval for both kinds of memory; its
  // threadgroup bytes are unwritten until written (tg_base).
  if (w->ep_tg > 0xf0000000u) {
    for (int i = 0; i < w->narrays; i++)
      if (w->arrays[i].shadow) std::memset(w->arrays[i].shadow, 0, w->arrays[i].shadow_cap);
    w->ep_tg = 0;
  }
  t_pending.clear();  // of a threadgroup a fatal finding or a deadlock ended
  t_write.active = false;
  t_xep = 0;
  if (w->job && w->job->kernel && w->job->kernel->checking) {
    for (int i = 0; i < w->narrays; i++) std::memset(w->arrays[i].data, kCheckPoison, w->arrays[i].size);
  }
  w->ep_tg++;
  w->ep_dev++;
  w->tg_base = w->ep_tg;
  std::fill(w->sg_ep.begin(), w->sg_ep.end(), 0);
}

void check_barrier_passed(Worker*) {
  settle_write();
  t_xep++;
}

bool check_has_fatal() {
  std::lock_guard<std::mutex> lock(g_find_mu);
  return g_fatal;
}

void check_note_divergent(Worker* w, const char* file, int line, int returned, int total) {
  Finding f;
  f.kind = kFindDivergent;
  f.space = kSpaceThreadgroup;
  f.a.valid = true;
  std::memcpy(f.a.group, w->group_pos, sizeof f.a.group);
  f.a.line = uint32_t(line > 0 ? line : 0);
  f.a.file = file ? file : "";
  f.note = "divergent barrier: " + std::to_string(returned) + " of " + std::to_string(total) +
           " threads had returned";
  add(std::move(f));
}

std::vector<Finding> take_findings() {
  std::lock_guard<std::mutex> lock(g_find_mu);
  std::vector<Finding> out;
  out.swap(g_findings);
  g_fatal = false;
  return out;
}

}  // namespace runner

// ---------------------------------------------------------------------------
// The instrumentation's entry points.

using runner::on_access;

#define MTL_RET reinterpret_cast<uintptr_t>(__builtin_return_address(0))

extern "C" {

void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}

#define MTL_HOOKS(N)                                                                                  \
  void __tsan_read##N(void* a) { on_access(reinterpret_cast<uintptr_t>(a), N, false, true, false, MTL_RET); } \
  void __tsan_write##N(void* a) { on_access(reinterpret_cast<uintptr_t>(a), N, true, false, false, MTL_RET); } \
  void __tsan_unaligned_read##N(void* a) {                                                            \
    on_access(reinterpret_cast<uintptr_t>(a), N, false, true, false, MTL_RET);                       \
  }                                                                                                   \
  void __tsan_unaligned_write##N(void* a) {                                                           \
    on_access(reinterpret_cast<uintptr_t>(a), N, true, false, false, MTL_RET);                       \
  }                                                                                                   \
  void __tsan_volatile_read##N(void* a) { on_access(reinterpret_cast<uintptr_t>(a), N, false, true, false, MTL_RET); } \
  void __tsan_volatile_write##N(void* a) { on_access(reinterpret_cast<uintptr_t>(a), N, true, false, false, MTL_RET); }
MTL_HOOKS(1)
MTL_HOOKS(2)
MTL_HOOKS(4)
MTL_HOOKS(8)
MTL_HOOKS(16)
#undef MTL_HOOKS

void __tsan_read_range(void* a, unsigned long n) {
  on_access(reinterpret_cast<uintptr_t>(a), n, false, true, false, MTL_RET);
}
void __tsan_write_range(void* a, unsigned long n) {
  on_access(reinterpret_cast<uintptr_t>(a), n, true, false, false, MTL_RET);
}

// Atomics: checked as atomic accesses, then done sequentially consistent
// (the memory order is stronger than asked, never weaker).
#define MTL_ATOMICS(N, T)                                                                             \
  T __tsan_atomic##N##_load(const volatile T* a, int) {                                               \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), false, true, true, MTL_RET);                \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                      \
  }                                                                                                   \
  void __tsan_atomic##N##_store(volatile T* a, T v, int) {                                            \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, false, true, MTL_RET);                \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                   \
  T __tsan_atomic##N##_exchange(volatile T* a, T v, int) {                                            \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                               \
  }                                                                                                   \
  T __tsan_atomic##N##_fetch_add(volatile T* a, T v, int) {                                           \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                \
  }                                                                                                   \
  T __tsan_atomic##N##_fetch_sub(volatile T* a, T v, int) {                                           \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                                \
  }                                                                                                   \
  T __tsan_atomic##N##_fetch_and(volatile T* a, T v, int) {                                           \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                \
  }                                                                                                   \
  T __tsan_atomic##N##_fetch_or(volatile T* a, T v, int) {                                            \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                 \
  }                                                                                                   \
  T __tsan_atomic##N##_fetch_xor(volatile T* a, T v, int) {                                           \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                \
  }                                                                                                   \
  T __tsan_atomic##N##_fetch_nand(volatile T* a, T v, int) {                                          \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                               \
  }                                                                                                   \
  int __tsan_atomic##N##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {                \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);           \
  }                                                                                                   \
  int __tsan_atomic##N##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {                  \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);           \
  }                                                                                                   \
  T __tsan_atomic##N##_compare_exchange_val(volatile T* a, T c, T v, int, int) {                      \
    on_access(reinterpret_cast<uintptr_t>(a), sizeof(T), true, true, true, MTL_RET);                 \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                 \
    return c;                                                                                         \
  }
MTL_ATOMICS(8, signed char)
MTL_ATOMICS(16, short)
MTL_ATOMICS(32, int)
MTL_ATOMICS(64, long long)
#undef MTL_ATOMICS

void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int) {}

// memcpy, memmove and memset calls left in a checking kernel are linked to
// these (-Wl,--wrap): the copied ranges are checked like any access.
void* __wrap_memcpy(void* d, const void* s, size_t n) {
  on_access(reinterpret_cast<uintptr_t>(s), n, false, true, false, MTL_RET);
  on_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, MTL_RET);
  return memcpy(d, s, n);
}
void* __wrap_memmove(void* d, const void* s, size_t n) {
  on_access(reinterpret_cast<uintptr_t>(s), n, false, true, false, MTL_RET);
  on_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, MTL_RET);
  return memmove(d, s, n);
}
void* __wrap_memset(void* d, int c, size_t n) {
  on_access(reinterpret_cast<uintptr_t>(d), n, true, false, false, MTL_RET);
  return memset(d, c, n);
}

// Array subscripts with a known bound (-fsanitize=bounds). The compiler
// passes the source position, the array type and the index.
struct MtlUbsanLoc {
  const char* file;
  uint32_t line, column;
};
struct MtlUbsanType {
  uint16_t kind, info;
  char name[1];
};
struct MtlUbsanOOB {
  MtlUbsanLoc loc;
  const MtlUbsanType* array_type;
  const MtlUbsanType* index_type;
};

static void mtl_ubsan_oob(const MtlUbsanOOB* d, uintptr_t index) {
  runner::Worker* w = runner::tls_worker;
  runner::Finding f;
  f.kind = kFindBounds;
  f.space = kSpaceUnknown;
  f.fatal = true;
  int64_t v = int64_t(index);
  // info: bit 0 signed, the rest log2 of the bit width.
  if (d->index_type && d->index_type->kind == 0) {
    unsigned bits = 1u << (d->index_type->info >> 1);
    bool is_signed = d->index_type->info & 1;
    if (bits < 64) {
      uint64_t m = (uint64_t(1) << bits) - 1;
      uint64_t u = uint64_t(index) & m;
      v = is_signed && (u >> (bits - 1)) ? int64_t(u | ~m) : int64_t(u);
    }
  }
  f.offset = v;
  f.name = d->array_type ? d->array_type->name : "";
  f.a.valid = true;
  f.a.line = d->loc.line;
  f.a.col = d->loc.column;
  f.a.file = d->loc.file ? d->loc.file : "";
  if (w && w->cur) {
    std::memcpy(f.a.group, w->group_pos, sizeof f.a.group);
    f.a.thread = uint32_t(w->cur->index);
  }
  f.note = "array index out of bounds";
  runner::add(std::move(f));
  if (w && w->cur) runner::kill_current_fiber();
  runner::Line().str("bad access: array index out of bounds outside a kernel thread").emit();
  _exit(kExitBadAccess);
}

void __ubsan_handle_out_of_bounds(const MtlUbsanOOB* d, uintptr_t index) { mtl_ubsan_oob(d, index); }
void __ubsan_handle_out_of_bounds_abort(const MtlUbsanOOB* d, uintptr_t index) { mtl_ubsan_oob(d, index); }

}  // extern "C"
