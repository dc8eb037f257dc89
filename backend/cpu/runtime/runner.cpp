// runner.cpp — the cpu runner: loads translated kernels (shared objects
// exporting mtl_kernels), binds buffers and runs dispatches, each
// threadgroup's threads as cooperative fibers on one worker thread
// (sched.cpp), optionally checking every access (check.cpp), inside a
// sandbox (sandbox.cpp).
//
// It speaks the framed protocol of protocol.h on stdin and on the
// descriptor its stdout was (the protocol is moved to a private descriptor
// and stdout made stderr, so a kernel's stray output cannot corrupt it; the
// runner's own reports go to stderr's pipe under a private descriptor too,
// and once a kernel is loaded the sandbox lets nothing else be written). A
// runner loads one kernel object in its life: each compiled program runs in
// a runner of its own, so nothing one kernel does reaches another's. A
// kernel that deadlocks or breaks a checking rule is reported in-band and the
// runner stays alive; a kernel that faults kills the runner with a distinct
// exit status after writing a one line report to stderr, and metalab
// restarts it.
//
// Usage: runner [-workers N] [-objects DIR] [-memory BYTES] [-cpu SECONDS] [-no-sandbox]
//        runner -compile-sandbox [-read PATH] [-write DIR] [-memory BYTES] [-cpu SECONDS] [-fsize BYTES] -- COMMAND ARGS
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "runner.h"
#include "serve.h"

using namespace mtl_proto;
using namespace runner;

namespace runner {
extern std::string g_err;
extern uint8_t g_err_kind;
}  // namespace runner

namespace {

constexpr size_t kAltStackSize = 64 * 1024;

std::string g_hello;
bool g_locked = false;  // the loaded objects are sealed and the second filter is on

using mtl_serve::send;
using mtl_serve::send_err;
using mtl_serve::send_ok;

void put_access(Writer& w, const Access& a) {
  w.put<uint8_t>(a.valid);
  w.put<uint8_t>(a.write);
  w.put<uint8_t>(a.atomic);
  w.put<uint8_t>(0);
  for (uint32_t g : a.group) w.put<uint32_t>(g);
  w.put<uint32_t>(a.thread);
  w.put<uint64_t>(a.pc);
  w.put<uint32_t>(a.line);
  w.put<uint32_t>(a.col);
  w.str(a.file);
}

void put_findings(Writer& w, const std::vector<Finding>& fs) {
  w.put<uint32_t>(uint32_t(fs.size()));
  for (const Finding& f : fs) {
    w.put<uint8_t>(f.kind);
    w.put<uint8_t>(f.space);
    w.put<uint8_t>(f.fatal);
    w.put<uint8_t>(0);
    w.put<int32_t>(f.buffer);
    w.str(f.name);
    w.put<int64_t>(f.offset);
    w.put<uint32_t>(f.size);
    w.put<uint32_t>(f.count);
    put_access(w, f.a);
    put_access(w, f.b);
    w.str(f.note);
  }
}

// ---------------------------------------------------------------------------
// Requests.

std::vector<Kernel*> g_kernels;
bool g_sandbox = true;
int g_workers = 1;
std::string g_loaded;  // the kernel object this runner loaded, "" before

void do_load(Reader& r) {
  std::string path = r.str();
  std::string name = r.str();
  uint8_t flags = r.get<uint8_t>();
  if (!r.ok) return send_err(kErrUsage, "malformed LOAD");
  if (!g_loaded.empty() && path != g_loaded) {
    return send_err(kErrUsage, "this runner already loaded " + g_loaded + ": each kernel object runs in a runner of its own");
  }
  if (g_loaded.empty()) {
    g_loaded = path;
    // The object's Landlock layer comes before the workers start (a
    // layer binds the thread that adds it and the threads it starts
    // later), and both before the object's code first runs (its
    // constructors, in dlopen).
    if (g_sandbox) g_hello += "; " + confine_to_object(path);
    start_pool(g_workers);
  }
  void* so = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (g_sandbox && !g_locked) {
    g_locked = true;
    g_hello += ";" + lock_after_load(mtl_serve::g_out);
  }
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
  k->checking = flags & kLoadChecking;
  Dl_info dli;
  if (dladdr(reinterpret_cast<void*>(info->run), &dli) && dli.dli_fbase) {
    k->so_base = reinterpret_cast<uintptr_t>(dli.dli_fbase);
  }
  for (int i = 0; i < kMaxBuffers; i++) k->writable[i] = info->bufs == nullptr;
  for (int i = 0; i < info->nbufs && info->bufs; i++) {
    int idx = info->bufs[i].index;
    if (idx >= 0 && idx < kMaxBuffers) k->writable[idx] = k->writable[idx] || info->bufs[i].writable;
  }
  size_t off = 0;
  int max_id = -1;
  for (int i = 0; i < info->nslots; i++) {
    const mtl_rt::TGSlot& s = info->slots[i];
    if (s.id < 0 || s.id > 1 << 20) return send_err(kErrUsage, "bad threadgroup slot id " + std::to_string(s.id));
    size_t a = s.align ? s.align : 1;
    if (a & (a - 1)) {
      return send_err(kErrUsage, "threadgroup slot " + std::string(s.name ? s.name : "?") + " has alignment " +
                                     std::to_string(a) + ", not a power of two");
    }
    if (a > 4096) return send_err(kErrUsage, "threadgroup slot alignment " + std::to_string(a) + " exceeds 4096");
    off = round_up(off, a);
    k->slots.push_back({s.id, off, s.size, a, &s, {}});
    off += s.size;
    max_id = std::max(max_id, s.id);
  }
  if (int(k->slots.size()) > kMaxTGSlots) {
    return send_err(kErrUsage, "kernel has " + std::to_string(k->slots.size()) + " threadgroup declarations, more than " +
                                   std::to_string(kMaxTGSlots));
  }
  k->static_tg = round_up(off, 16);
  if (k->checking) {
    // The checking build says which bytes of each declaration's element
    // type are padding: a struct copied whole reads them, but they hold no
    // value (see tg_access).
    using PadFn = const unsigned char* (*)(int, size_t*);
    if (auto pad = reinterpret_cast<PadFn>(dlsym(so, "mtl_tg_padding"))) {
      for (auto& s : k->slots) {
        size_t elem = 0;
        const unsigned char* m = pad(s.id, &elem);
        if (!m || elem == 0 || elem > s.size || s.size % elem != 0) continue;
        if (std::find(m, m + elem, 1) == m + elem) continue;  // no padding
        s.pad.assign(m, m + elem);
      }
    }
  }
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
    w.put<uint64_t>(s.desc->elem_size);
    w.put<uint32_t>(uint32_t(s.desc->rank < 0 ? 0 : std::min(s.desc->rank, 4)));
    for (int d = 0; d < 4; d++) w.put<uint64_t>(s.desc->extents[d]);
    w.str(s.desc->name ? s.desc->name : "");
  }
  send_ok(w);
}

bool g_tg_bound[kMaxBuffers];
size_t g_tg_size[kMaxBuffers];

void do_buffer(Reader& r) {
  uint32_t index = r.get<uint32_t>();
  uint8_t kind = r.get<uint8_t>();
  uint64_t size = r.get<uint64_t>();
  uint8_t has = r.get<uint8_t>();
  if (!r.ok || index >= uint32_t(kMaxBuffers)) return send_err(kErrUsage, "malformed BUFFER");
  if (has > kSourceData) return send_err(kErrUsage, "the cpu runner keeps no copies of buffers (BUFFER source " + std::to_string(has) + ")");
  if (has && uint64_t(r.end - r.p) < size) return send_err(kErrUsage, "BUFFER data shorter than its size");
  if (kind == kThreadgroup) {
    g_tg_size[index] = size_t(size);
    g_tg_bound[index] = true;
    return send_ok(Writer());
  }
  if (!bind_device(int(index), size_t(size), has ? r.p : nullptr)) {
    return send_err(kErrOther, "cannot map buffer " + std::to_string(index) + " of " + std::to_string(size) + " bytes");
  }
  send_ok(Writer());
}

void do_read(Reader& r) {
  uint32_t index = r.get<uint32_t>();
  if (!r.ok || index >= uint32_t(kMaxBuffers) || !g_dev[index].bound) return send_err(kErrUsage, "READ of an unbound buffer");
  send(kOK, g_dev[index].data, g_dev[index].size);
}

void do_reset() {
  for (int i = 0; i < kMaxBuffers; i++) {
    free_device(i);
    g_tg_size[i] = 0;
    g_tg_bound[i] = false;
  }
  send_ok(Writer());
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
  if (order > kSimdShuffle) return send_err(kErrUsage, "unknown thread order " + std::to_string(order));
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
  int host_arrays = 0;
  for (int i = 0; i < kMaxBuffers; i++) {
    g_job.buffers[i] = g_dev[i].bound ? g_dev[i].data : nullptr;
    if (g_tg_bound[i]) {
      g_job.tg_sizes[i] = g_tg_size[i];
      g_job.tg_bound[i] = true;
      g_job.ntg = i + 1;
      host_arrays++;
    }
  }
  if (int(k->slots.size()) + host_arrays > kMaxTGSlots) {
    return send_err(kErrUsage, "more than " + std::to_string(kMaxTGSlots) + " threadgroup arrays");
  }
  Writer w;
  w.put<uint32_t>(repeat);
  for (uint32_t rep = 0; rep < repeat; rep++) {
    g_err.clear();
    check_begin_dispatch(g_job);
    auto t0 = std::chrono::steady_clock::now();
    if (ngroups > 0) run_dispatch(ngroups);
    auto t1 = std::chrono::steady_clock::now();
    std::vector<Finding> fs = take_findings();
    bool fatal = std::any_of(fs.begin(), fs.end(), [](const Finding& f) { return f.fatal; });
    if (fatal || !g_err.empty()) {
      Writer extra;
      put_findings(extra, fs);
      if (fatal) return send_err(kErrBadAccess, "the checking mode found a bad access", &extra);
      return send_err(g_err_kind, g_err, &extra);
    }
    std::string msg;
    if (!check_canaries(&msg)) return send_err(kErrBadAccess, msg);
    w.put<uint64_t>(uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    if (rep + 1 == repeat) {
      put_findings(w, fs);
    }
  }
  if (repeat == 0) put_findings(w, {});
  send_ok(w);
}

}  // namespace

namespace runner {
// act_without_seal (sandbox.cpp) makes the runner seal nothing after the
// load, as where the kernel lacks mseal: -no-seal, for the tests of that
// fallback, never given by metalab itself.
void act_without_seal();
}  // namespace runner

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "-compile-sandbox") == 0) exec_sandboxed(argc, argv, 2);
  int workers = int(std::thread::hardware_concurrency());
  SandboxOptions sb;
  bool sandbox = true;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "-workers") {
      workers = std::atoi(v), i++;
    } else if (a == "-objects") {
      sb.objects = v, i++;
    } else if (a == "-memory") {
      sb.memory = std::strtoull(v, nullptr, 10), i++;
    } else if (a == "-cpu") {
      sb.cpu_seconds = std::strtoull(v, nullptr, 10), i++;
    } else if (a == "-no-sandbox") {
      sandbox = false;
    } else if (a == "-no-seal") {
      act_without_seal();
    }
  }
  if (workers <= 0) workers = 1;
  if (workers > 64) workers = 64;
  // The protocol on a private descriptor (serve.h); the reports on one
  // of their own, the one descriptor besides it the sandbox lets the
  // runner write.
  mtl_serve::take_protocol();
  g_report_fd = dup(2);
  mtl_serve::g_report = g_report_fd;
  install_fault_handlers();
  install_sigsys_handler();
  {
    stack_t ss;
    ss.ss_sp = std::malloc(kAltStackSize);
    ss.ss_size = kAltStackSize;
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
  }
  if (!reserve_layout(workers)) {
    Line().str("runner: cannot reserve address space for buffers").emit();
    return kExitProtocol;
  }
  std::string sandbox_text = "off";
  if (sandbox) sandbox_text = restrict_process(sb);
  g_sandbox = sandbox;
  g_workers = workers;
  mtl_serve::watch_parent();
  if (sandbox) sandbox_text += ";" + filter_syscalls();
  g_hello = std::string("fibers ") + mtl_fiber::kind() + "; " + std::to_string(workers) + " workers; " + layout_text() +
            "; sandbox " + sandbox_text;
  // hello, load, buffer, dispatch, read, reset. After a LOAD the hello
  // also says how the object was confined.
  mtl_serve::serve({[] {
                      Writer w;
                      w.str(g_hello);
                      send_ok(w);
                    },
                    do_load, do_buffer, do_dispatch, do_read, do_reset});
}
