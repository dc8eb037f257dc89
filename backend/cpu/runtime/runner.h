// runner.h — the runner's internal declarations, shared by its files:
// memory.cpp (address layout, buffers, threadgroup regions), sched.cpp
// (workers, fibers, the scheduler and the mtl_rt synchronisation calls),
// check.cpp (the checking mode), sandbox.cpp and runner.cpp (protocol and
// requests).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "fiber.h"
#include "mtl_rt.h"
#include "protocol.h"

namespace runner {

constexpr int kMaxThreads = 1024;
constexpr int kMaxBuffers = 128;
constexpr int kMaxTGSlots = 64;  // static slots plus host threadgroup buffers, per worker
constexpr size_t kMaxExchange = 512;

size_t page_size();
inline size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// ---------------------------------------------------------------------------
// Reporting that is safe in a signal handler: a line is built in a buffer
// and written with one write(2).

struct Line {
  char buf[512];
  size_t n = 0;
  Line& str(const char* s);
  Line& uint(uint64_t v);
  Line& hex(uint64_t v);
  void emit();  // writes the line (with a newline) to stderr in one write
};

// claim_death returns true for the first caller only; later callers (other
// faulting workers) park forever so the first one's report is whole.
bool claim_death();

// install_fault_handlers reports SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT and
// SIGTRAP as one line on stderr and exits with kExitBadAccess or kExitCrash.
void install_fault_handlers();

// ---------------------------------------------------------------------------
// Address layout. Every device buffer and every threadgroup array lives in
// a region of its own inside one reservation, with its data near the
// region's middle and the rest inaccessible, so an index of any distance a
// kernel can form from a 32-bit integer lands in the region of the buffer
// it came from: a plain run faults there, the checking mode reports it.

struct Layout {
  uintptr_t lo = 0, span = 0;  // the whole reservation
  uintptr_t dev_lo = 0;
  int dev_shift = 0, dev_regions = 0;
  uintptr_t tg_lo = 0;
  int tg_shift = 0, tg_workers = 0;  // kMaxTGSlots regions per worker
  bool reserved = false;
};
extern Layout g_layout;

// reserve_layout reserves the address space for workers; false if even the
// smallest layout could not be reserved.
bool reserve_layout(int workers);
std::string layout_text();

// A DevBuf is one bound device buffer. In plain mode the slack between the
// data and the end of its pages is filled with a canary.
struct DevBuf {
  bool bound = false;
  int region = -1;
  unsigned char* map = nullptr;  // first accessible byte (page aligned)
  size_t map_len = 0;
  unsigned char* data = nullptr;
  size_t size = 0;
  bool writable = true;  // from the kernel's parameter; decides shadowing
  struct DevCell* shadow = nullptr;  // checking mode, writable buffers
  size_t shadow_len = 0;
};
extern DevBuf g_dev[kMaxBuffers];
extern int g_region_owner[];  // device region -> buffer index, -1 free

bool bind_device(int index, size_t size, const void* data);
void free_device(int index);
// nearest_buffer returns the bound device buffer whose data is nearest addr
// (an address past every region's guard still belongs to some buffer's
// index arithmetic), or -1 when none is bound.
int nearest_buffer(uintptr_t addr);
unsigned char* region_base_dev(int region);
unsigned char* region_base_tg(int worker, int slot);
bool check_canaries(std::string* msg);

// ---------------------------------------------------------------------------
// Loaded kernels.

struct Kernel {
  std::string path, name;
  void* so = nullptr;
  uintptr_t so_base = 0;  // load address, for pcs in reports
  bool checking = false;
  const mtl_rt::KernelInfo* info = nullptr;
  std::vector<int> slot_index;  // by slot id: index into slots, -1 when not this kernel's
  size_t static_tg = 0;
  struct Slot {
    int id;
    size_t offset, size, align;
    const mtl_rt::TGSlot* desc;
    // The element type's padding bytes (1: padding), from the checking
    // build's mtl_tg_padding (see build.go); empty when none is known.
    std::vector<unsigned char> pad;
  };
  std::vector<Slot> slots;
  bool writable[kMaxBuffers];  // per buffer index, from info->bufs
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
  int sg = 0;
  Worker* worker = nullptr;
  mtl_rt::ThreadCtx tc;
  const void* ex_mine = nullptr;
  size_t ex_size = 0;
  void* ex_all = nullptr;
  uint32_t* ex_active = nullptr;
  const char* bar_file = nullptr;  // the threadgroup barrier it waits at
  int bar_line = 0;
  unsigned bar_flags = 0;
};

// The Job is the dispatch being run, shared read-only by workers.
struct Job {
  const Kernel* kernel = nullptr;
  uint32_t groups[3] = {1, 1, 1};
  uint32_t threads[3] = {1, 1, 1};
  uint8_t order = mtl_proto::kInOrder;
  uint64_t seed = 0;
  void* buffers[kMaxBuffers] = {};
  size_t tg_sizes[kMaxBuffers] = {};
  bool tg_bound[kMaxBuffers] = {};
  int ntg = 0;  // tgbufs used: indices < ntg
};

// A TGArray is one threadgroup array of the worker's current kernel: a
// static slot or host threadgroup memory, in a region of its own.
struct TGArray {
  unsigned char* data = nullptr;
  size_t size = 0;
  unsigned char* map = nullptr;  // accessible pages
  size_t map_len = 0;
  int space = 0;  // kSpaceThreadgroup or kSpaceHostThreadgroup
  int id = 0;     // slot id or host index
  // pad marks the padding bytes of the declaration's element type (pad_elem
  // bytes, repeated over the array): a read of them reads no value, so the
  // checking mode neither reports it unwritten nor records it. nullptr when
  // the element type has none, or is unknown.
  const unsigned char* pad = nullptr;
  size_t pad_elem = 0;
  struct TGCell* shadow = nullptr;
  size_t shadow_cap = 0;
};

struct Worker {
  int id = 0;
  mtl_fiber::Fiber sched;
  std::vector<FiberSlot*> fibers;
  std::vector<uint8_t> state;
  std::vector<int> order;
  std::vector<FiberSlot*> runlist;  // this phase's fibers, in run order
  size_t runpos = 0;                // next runlist entry to resume
  FiberSlot* cur = nullptr;
  TGArray arrays[kMaxTGSlots];  // by region index within the worker
  int narrays = 0;
  std::vector<int> slot_array;  // slot id -> array index
  void* tgbufs[kMaxBuffers] = {};
  const Job* job = nullptr;
  int nthreads = 0, nsimd = 0;
  int n_runnable = 0, n_tgbar = 0, n_done = 0;
  std::vector<int> sg_runnable, sg_waiting, sg_live;  // per simd group
  uint64_t group_linear = 0;
  uint32_t group_pos[3] = {0, 0, 0};
  void* altstack = nullptr;
  unsigned char exchange[32 * kMaxExchange];  // simd_exchange deposits, by lane
  // Checking-mode epochs: an interval ends when a barrier orders the memory.
  uint32_t ep_tg = 0, ep_dev = 0;  // monotonic across threadgroups
  uint32_t tg_base = 0;            // ep_tg at the start of the current threadgroup
  std::vector<uint16_t> sg_ep;     // per simd group: collectives and simd barriers passed
  const char* unfenced_file = nullptr;  // last barrier that did not order threadgroup memory
  int unfenced_line = 0;
};

extern thread_local Worker* tls_worker;
extern Job g_job;
extern std::atomic<bool> g_abort;

// set_error records the dispatch's first error and stops the dispatch.
void set_error(uint8_t kind, const std::string& msg);

void start_pool(int n);
void run_dispatch(uint64_t ngroups);
int pool_size();

// kill_current_fiber ends the calling fiber for good (after a fatal
// finding): control returns to the worker's scheduler, which sees g_abort.
[[noreturn]] void kill_current_fiber();

// ---------------------------------------------------------------------------
// Checking mode (check.cpp).

void check_begin_dispatch(const Job& job);
void check_begin_group(Worker* w);
// check_end_interval judges the interval's pending uninitialised reads; the
// scheduler calls it before a barrier that orders threadgroup memory
// completes and when a threadgroup ends.
void check_end_interval(Worker* w);
void check_prepare_array(TGArray* a);
bool check_has_fatal();
void check_note_divergent(Worker* w, const char* file, int line, int returned, int total);

// A Finding as reported; see protocol.h for the encoding.
struct Access {
  bool valid = false, write = false, atomic = false;
  uint32_t group[3] = {0, 0, 0};
  uint32_t thread = 0;
  uint64_t pc = 0;
  uint32_t line = 0, col = 0;
  std::string file;
};
struct Finding {
  uint8_t kind = 0, space = 0;
  bool fatal = false;
  int32_t buffer = -1;
  std::string name;
  int64_t offset = 0;
  uint32_t size = 0;
  uint32_t count = 1;
  Access a, b;
  std::string note;
};
std::vector<Finding> take_findings();

// ---------------------------------------------------------------------------
// Sandbox (sandbox.cpp).

struct SandboxOptions {
  std::string objects;       // the only directory the runner may read after start-up
  uint64_t memory = 0;       // bytes of private writable memory, 0: no limit
  uint64_t cpu_seconds = 0;  // 0: no limit
};

// restrict_process applies the resource limits, no_new_privs and Landlock
// to the calling thread and the threads it starts later; filter_syscalls
// installs the seccomp filter on every thread. Each returns a description of
// what is in force.
std::string restrict_process(const SandboxOptions& o);
std::string filter_syscalls();
void install_sigsys_handler();

// confine_to_object adds a Landlock layer under which the calling thread
// (and the threads it starts later: the workers are started after it) can
// read only the kernel object path and what the loader needs;
// lock_after_load seals the loaded objects' code and read-only data and
// installs the second system-call filter (no PROT_EXEC, writes only to
// proto_fd and g_report_fd). Each returns a description.
std::string confine_to_object(const std::string& path);
std::string lock_after_load(int proto_fd);

// g_report_fd is where Line writes the runner's reports (stderr's pipe,
// under a descriptor of its own: kernels cannot write to it by writing to
// stderr).
extern int g_report_fd;

// exec_sandboxed runs the command after argv[first..] and "--" in the
// compile sandbox (see sandbox.cpp); it does not return.
[[noreturn]] int exec_sandboxed(int argc, char** argv, int first);

}  // namespace runner
