// runner.cpp — the cuda runner: loads kernel objects built by nvcc (shared
// objects exporting mtl_cuda_kernels, see mtl_cuda.h), binds buffers in
// device memory and runs dispatches on one GPU.
//
// It speaks the cpu runner's framed protocol (protocol.h) on stdin and on
// the descriptor its stdout was; the protocol moves to a private
// descriptor and stdout becomes stderr, so a kernel's printf cannot corrupt
// it. Host code only: nvcc builds it as C++ and links the CUDA runtime as a
// shared library, the same one every kernel object links, so the objects'
// fat binaries register with the runtime the runner drives.
//
// What differs from the cpu runner:
//   - DISPATCH launches the kernel `repeat` times on one stream between two
//     CUDA events and reports no per-dispatch times but one total: the
//     events' elapsed time (the GPU's clock), appended after the findings.
//     The order and seed are accepted and ignored: the GPU schedules.
//   - Each device buffer has kSlack canary bytes before and after it; a
//     dispatch that changed them is reported as a bad access (in band, the
//     runner lives on). Out-of-bounds accesses further away are caught only
//     when they leave mapped memory: the GPU's illegal-address fault.
//   - A fault in a kernel (illegal address, a trap, a hardware error)
//     leaves the CUDA context unusable, so the runner reports it in one line
//     on stderr and exits with the protocol's exit status for its kind
//     (kExitBadAccess, kExitTimeout, kExitCrash); metalab starts a new one.
//     A launch the GPU refuses (too many threads or registers, too much
//     shared memory) is an in-band kErrLaunch and the runner lives on.
//   - No sandbox: the CUDA driver needs the system calls and the device
//     files the cpu runner's filter forbids. The runner still exits when
//     metalab goes away.
//
// Usage: runner [-device N] [-keep-share N]
//        runner -tables OBJECT   print a kernel object's tables and exit
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "mtl_cuda_abi.h"
#include "protocol.h"
#include "serve.h"

using namespace mtl_proto;

namespace {

// kSlack is the canary region on each side of a device buffer: a multiple
// of 256, so a buffer's data keeps cudaMalloc's alignment.
constexpr size_t kSlack = 256;

// Reports that survive a dying process: one line, one write(2) (serve.h).
using mtl_serve::report_line;

void on_fault(int sig) {
  char buf[64];
  int n = snprintf(buf, sizeof buf, "crash: the cuda runner received signal %d\n", sig);
  ssize_t r = write(2, buf, size_t(n));
  (void)r;
  _exit(kExitCrash);
}

// ---------------------------------------------------------------------------
// Replies (serve.h's; the framing is protocol.h's).

using mtl_serve::send;
using mtl_serve::send_ok;

// send_err replies ERR with no findings: the cuda runner finds none.
void send_err(uint8_t kind, const std::string& msg) {
  Writer none;
  none.put<uint32_t>(0);
  mtl_serve::send_err(kind, msg, &none);
}

// ---------------------------------------------------------------------------
// CUDA errors.

std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// fatal reports an error that leaves the CUDA context unusable (a fault in
// a kernel) and exits with the exit status of its kind.
[[noreturn]] void fatal(cudaError_t e, const std::string& what) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
      report_line("bad access: " + what + ": " + cuda_text(e));
      _exit(kExitBadAccess);
    case cudaErrorLaunchTimeout:
      report_line("timeout: " + what + ": " + cuda_text(e));
      _exit(kExitTimeout);
    default:
      report_line("crash: " + what + ": " + cuda_text(e));
      _exit(kExitCrash);
  }
}

// must exits through fatal when a CUDA call that cannot fail for the
// kernel's own reasons failed: an earlier fault surfaced here.
void must(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fatal(e, what);
}

// ---------------------------------------------------------------------------
// The device.

unsigned char canary_byte(size_t i) { return static_cast<unsigned char>(0xa5u ^ (i * 29u)); }

struct Device {
  int index = 0;
  bool ready = false;
  std::string error;  // why not ready
  cudaDeviceProp prop{};
  int count = 0;
  int driver = 0, runtime = 0;
  int sms = 0, max_threads = 0, smem_default = 0, smem_optin = 0;
  int max_block[3] = {0, 0, 0}, max_grid[3] = {0, 0, 0};
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  // Pinned host memory: the canary pattern uploaded around each buffer,
  // and room to read every buffer's slack back in one go.
  unsigned char* canaries = nullptr;
  unsigned char* slack = nullptr;
};
Device g_dev;

void init_device(int index) {
  Device& d = g_dev;
  d.index = index;
  cudaDriverGetVersion(&d.driver);
  if (cudaRuntimeGetVersion(&d.runtime) != cudaSuccess || d.runtime == 0) d.runtime = CUDART_VERSION;
  cudaError_t e = cudaGetDeviceCount(&d.count);
  if (e != cudaSuccess) {
    d.error = "cudaGetDeviceCount: " + cuda_text(e);
    return;
  }
  if (d.count == 0) {
    d.error = "no CUDA device";
    return;
  }
  if (index < 0 || index >= d.count) {
    d.error = "no CUDA device " + std::to_string(index) + " (there are " + std::to_string(d.count) + ")";
    return;
  }
  if ((e = cudaSetDevice(index)) != cudaSuccess || (e = cudaFree(nullptr)) != cudaSuccess) {
    d.error = "cannot open CUDA device " + std::to_string(index) + ": " + cuda_text(e);
    return;
  }
  if ((e = cudaGetDeviceProperties(&d.prop, index)) != cudaSuccess) {
    d.error = "cudaGetDeviceProperties: " + cuda_text(e);
    return;
  }
  struct {
    int* v;
    cudaDeviceAttr a;
  } attrs[] = {
      {&d.sms, cudaDevAttrMultiProcessorCount},
      {&d.max_threads, cudaDevAttrMaxThreadsPerBlock},
      {&d.smem_default, cudaDevAttrMaxSharedMemoryPerBlock},
      {&d.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin},
      {&d.max_block[0], cudaDevAttrMaxBlockDimX},
      {&d.max_block[1], cudaDevAttrMaxBlockDimY},
      {&d.max_block[2], cudaDevAttrMaxBlockDimZ},
      {&d.max_grid[0], cudaDevAttrMaxGridDimX},
      {&d.max_grid[1], cudaDevAttrMaxGridDimY},
      {&d.max_grid[2], cudaDevAttrMaxGridDimZ},
  };
  for (auto& a : attrs) {
    if ((e = cudaDeviceGetAttribute(a.v, a.a, index)) != cudaSuccess) {
      d.error = "cudaDeviceGetAttribute: " + cuda_text(e);
      return;
    }
  }
  if (d.smem_optin < d.smem_default) d.smem_optin = d.smem_default;
  if ((e = cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking)) != cudaSuccess ||
      (e = cudaEventCreate(&d.start)) != cudaSuccess || (e = cudaEventCreate(&d.stop)) != cudaSuccess) {
    d.error = "cannot create a stream and events: " + cuda_text(e);
    return;
  }
  if ((e = cudaMallocHost(reinterpret_cast<void**>(&d.canaries), 2 * kSlack)) != cudaSuccess ||
      (e = cudaMallocHost(reinterpret_cast<void**>(&d.slack), 2 * kSlack * mtl_rt::kMaxBuffers)) != cudaSuccess) {
    d.error = "cannot allocate pinned host memory: " + cuda_text(e);
    return;
  }
  for (size_t i = 0; i < 2 * kSlack; i++) d.canaries[i] = canary_byte(i);
  d.ready = true;
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string hello_text() {
  const Device& d = g_dev;
  std::string s = "cuda runner; driver " + version_text(d.driver) + ", runtime " + version_text(d.runtime) + "; ";
  if (!d.ready) return s + "no GPU: " + d.error;
  char mem[32];
  snprintf(mem, sizeof mem, "%.1f GiB", double(d.prop.totalGlobalMem) / double(1ull << 30));
  return s + "device " + std::to_string(d.index) + " of " + std::to_string(d.count) + ": " + d.prop.name + " (sm_" +
         std::to_string(d.prop.major) + std::to_string(d.prop.minor) + ", " + std::to_string(d.sms) + " SMs, " + mem +
         ")";
}

// ---------------------------------------------------------------------------
// Requests.

struct Kernel {
  std::string path, name;
  const mtl_rt::KernelInfo* info = nullptr;
  cudaFuncAttributes attr{};
  int max_threads = 0;
  int dyn_limit = 0;  // dynamic shared memory the entry is set up for
};
std::vector<Kernel*> g_kernels;

struct DevBuf {
  bool bound = false;
  unsigned char* base = nullptr;  // cudaMalloc'd, kSlack before data
  size_t size = 0;
};
DevBuf g_buf[mtl_rt::kMaxBuffers];
bool g_tg_bound[mtl_rt::kMaxTGBuffers];
size_t g_tg_size[mtl_rt::kMaxTGBuffers];


bool need_device() {
  if (g_dev.ready) return true;
  send_err(kErrOther, "no GPU: " + g_dev.error);
  return false;
}

void do_hello() {
  const Device& d = g_dev;
  Writer w;
  w.str(hello_text());
  w.put<uint8_t>(d.ready ? 1 : 0);
  w.str(d.error);
  w.str(d.ready ? d.prop.name : "");
  w.put<uint32_t>(uint32_t(d.ready ? d.prop.major : 0));
  w.put<uint32_t>(uint32_t(d.ready ? d.prop.minor : 0));
  w.put<uint32_t>(uint32_t(d.driver));
  w.put<uint32_t>(uint32_t(d.runtime));
  w.put<uint32_t>(uint32_t(d.sms));
  w.put<uint64_t>(uint64_t(d.ready ? d.prop.totalGlobalMem : 0));
  w.put<uint32_t>(uint32_t(d.max_threads));
  w.put<uint64_t>(uint64_t(d.smem_default));
  w.put<uint64_t>(uint64_t(d.smem_optin));
  w.put<uint32_t>(uint32_t(d.count));
  w.put<uint32_t>(uint32_t(d.index));
  send_ok(w);
}

// metal_layout lays the slots of info out by Metal's rule: each aligned, in
// table order, the total rounded up to 16 bytes (the cpu runner's layout).
// It returns the total and fills offsets. nvcc's own layout of the
// __shared__ declarations is not visible; its total is sharedSizeBytes.
size_t metal_layout(const mtl_rt::KernelInfo* info, std::vector<size_t>* offsets) {
  size_t off = 0;
  for (int i = 0; i < info->nslots; i++) {
    const mtl_rt::TGSlot& s = info->slots[i];
    size_t a = s.align ? s.align : 1;
    off = (off + a - 1) / a * a;
    offsets->push_back(off);
    off += s.size;
  }
  return (off + 15) / 16 * 16;
}

// open_object opens a kernel object and returns its table, or nullptr
// with *err saying why.
const mtl_rt::KernelInfo* open_object(const std::string& path, int* n, std::string* err) {
  void* so = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    *err = std::string("dlopen: ") + dlerror();
    return nullptr;
  }
  auto abi = reinterpret_cast<const int*>(dlsym(so, "mtl_cuda_abi"));
  auto table = reinterpret_cast<const mtl_rt::KernelInfo* (*)(int*)>(dlsym(so, "mtl_cuda_kernels"));
  if (!abi || !table) {
    *err = path + ": not a cuda kernel object (no mtl_cuda_abi or mtl_cuda_kernels)";
    return nullptr;
  }
  if (*abi != MTL_CUDA_ABI) {
    *err = path + ": built against cuda ABI " + std::to_string(*abi) + ", the runner speaks " + std::to_string(MTL_CUDA_ABI);
    return nullptr;
  }
  *n = 0;
  return table(n);
}

// print_tables prints the kernel table of the object at path, with its
// slots laid out by Metal's rule, without touching the GPU (runner -tables
// PATH): one line per kernel, then one per slot.
int print_tables(const std::string& path) {
  int n = 0;
  std::string err;
  const mtl_rt::KernelInfo* infos = open_object(path, &n, &err);
  if (!infos) {
    fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  for (int i = 0; i < n; i++) {
    const mtl_rt::KernelInfo* info = &infos[i];
    std::vector<size_t> offsets;
    size_t tg = metal_layout(info, &offsets);
    printf("kernel %s max_threads %d tg_layout %d threadgroup_memory %zu slots %d buffers %d\n", info->name,
           info->max_threads, info->tg_layout, tg, info->nslots, info->nbufs);
    for (int j = 0; j < info->nslots; j++) {
      const mtl_rt::TGSlot& s = info->slots[j];
      printf("slot %d %s offset %zu size %zu align %zu\n", s.id, s.name ? s.name : "?", offsets[j], s.size, s.align);
    }
  }
  return 0;
}

// g_loaded is the one kernel object this runner may load ("" before its
// first LOAD): each program, each variant, has a runner of its own, so
// nothing one kernel does to the process reaches another's results.
std::string g_loaded;

void do_load(Reader& r) {
  std::string path = r.str();
  std::string name = r.str();
  uint8_t flags = r.get<uint8_t>();
  if (!r.ok) return send_err(kErrUsage, "malformed LOAD");
  if (flags & kLoadChecking) return send_err(kErrUsage, "the cuda backend has no checking mode");
  if (!g_loaded.empty() && path != g_loaded) {
    return send_err(kErrUsage, "this runner already loaded " + g_loaded + ": each kernel object runs in a runner of its own");
  }
  g_loaded = path;
  int n = 0;
  std::string err;
  const mtl_rt::KernelInfo* infos = open_object(path, &n, &err);
  if (!infos) return send_err(kErrOther, err);
  const mtl_rt::KernelInfo* info = nullptr;
  std::string names;
  for (int i = 0; i < n; i++) {
    if (name == infos[i].name) info = &infos[i];
    names += (names.empty() ? "" : ", ") + std::string(infos[i].name);
  }
  if (!info) return send_err(kErrUsage, "kernel " + name + " not found in " + path + " (has: " + names + ")");
  if (!need_device()) return;
  Kernel* k = new Kernel();
  k->path = path;
  k->name = name;
  k->info = info;
  cudaError_t e = info->attributes(&k->attr);
  if (e != cudaSuccess) {
    delete k;
    cudaGetLastError();
    std::string hint;
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
      hint = " (the object holds no code for this GPU's architecture, sm_" + std::to_string(g_dev.prop.major) +
             std::to_string(g_dev.prop.minor) + ")";
    }
    return send_err(kErrOther, "kernel " + name + ": cudaFuncGetAttributes: " + cuda_text(e) + hint);
  }
  k->max_threads = std::min(k->attr.maxThreadsPerBlock, info->max_threads > 0 ? info->max_threads : 1024);
  k->dyn_limit = g_dev.smem_default - int(k->attr.sharedSizeBytes);
  g_kernels.push_back(k);
  std::vector<size_t> offsets;
  const size_t metal_tg = metal_layout(info, &offsets);
  // The kernel's threadgroup memory: Metal's count where the table lists
  // every declaration (the translator's), so that it agrees with the cpu
  // backend and msl's estimate; nvcc's figure otherwise.
  const size_t tg = info->tg_layout ? metal_tg : size_t(k->attr.sharedSizeBytes);
  Writer w;
  w.put<uint32_t>(uint32_t(g_kernels.size() - 1));
  w.put<uint64_t>(uint64_t(tg));
  w.put<uint32_t>(uint32_t(k->max_threads));
  w.put<uint32_t>(uint32_t(info->nslots));
  for (int i = 0; i < info->nslots; i++) {
    const mtl_rt::TGSlot& s = info->slots[i];
    w.put<int32_t>(s.id);
    w.put<uint64_t>(offsets[i]);
    w.put<uint64_t>(s.size);
    w.put<uint64_t>(s.elem_size);
    w.put<uint32_t>(uint32_t(s.rank < 0 ? 0 : std::min(s.rank, 4)));
    for (int d = 0; d < 4; d++) w.put<uint64_t>(s.extents[d]);
    w.str(s.name ? s.name : "");
  }
  // Appended for the cuda backend: the compiled function's resources, then
  // nvcc's static shared memory on its own (the diagnostic figure).
  std::string layout = info->tg_layout ? " (threadgroup memory by Metal's layout " + std::to_string(metal_tg) + " bytes)"
                                       : " (threadgroup layout unknown: nvcc's figure stands)";
  w.str("registers " + std::to_string(k->attr.numRegs) + ", local " + std::to_string(k->attr.localSizeBytes) +
        " bytes, static shared " + std::to_string(k->attr.sharedSizeBytes) + " bytes" + layout + ", constant " +
        std::to_string(k->attr.constSizeBytes) + " bytes, max threads " + std::to_string(k->attr.maxThreadsPerBlock) +
        ", sm_" + std::to_string(k->attr.binaryVersion));
  w.put<uint64_t>(uint64_t(k->attr.sharedSizeBytes));
  send_ok(w);
}

// Device allocations outlive a run: RESET moves the bound buffers to a
// spare list, and BUFFER takes a spare of the same size before it asks
// cudaMalloc (whose cost, and cudaFree's synchronisation, would otherwise
// be paid by every timing sample). Spares not taken by the next run are
// freed at the RESET after it.
struct Spare {
  unsigned char* base;
  size_t size;
};
std::vector<Spare> g_spare, g_spare_old;

void free_buffer(int i) {
  if (g_buf[i].bound) g_spare.push_back({g_buf[i].base, g_buf[i].size});
  g_buf[i] = DevBuf();
}

void release_caches();

// take_allocation returns size+2*kSlack bytes of device memory: a spare
// of that size, or a new allocation (nullptr with *e set when cudaMalloc
// fails).
unsigned char* take_allocation(size_t size, cudaError_t* e) {
  for (auto* list : {&g_spare, &g_spare_old}) {
    for (size_t i = 0; i < list->size(); i++) {
      if ((*list)[i].size == size) {
        unsigned char* p = (*list)[i].base;
        list->erase(list->begin() + long(i));
        return p;
      }
    }
  }
  void* p = nullptr;
  *e = cudaMalloc(&p, size + 2 * kSlack);
  if (*e == cudaErrorMemoryAllocation) {
    // What metalab's caches hold must never make a run fail: free the
    // spares and the kept copies, and try once more.
    cudaGetLastError();
    release_caches();
    *e = cudaMalloc(&p, size + 2 * kSlack);
  }
  return *e == cudaSuccess ? static_cast<unsigned char*>(p) : nullptr;
}

// Copies kept on the device under a key (BUFFER sources keep and restore),
// least recently used evicted past a quarter of the GPU's memory shared
// among the runners metalab keeps at once (-keep-share N: a quarter / N).
struct Kept {
  unsigned char* data = nullptr;
  size_t size = 0;
  uint64_t used = 0;
};
std::vector<std::pair<std::string, Kept>> g_kept;
size_t g_kept_bytes = 0;
uint64_t g_tick = 0;
int g_keep_share = 1;

Kept* find_kept(const std::string& key) {
  for (auto& k : g_kept)
    if (k.first == key) return &k.second;
  return nullptr;
}

void drop_kept(size_t i) {
  must(cudaFree(g_kept[i].second.data), "cudaFree");
  g_kept_bytes -= g_kept[i].second.size;
  g_kept.erase(g_kept.begin() + long(i));
}

// release_caches frees every spare allocation and kept copy.
void release_caches() {
  for (auto* list : {&g_spare, &g_spare_old}) {
    for (const Spare& sp : *list) must(cudaFree(sp.base), "cudaFree");
    list->clear();
  }
  while (!g_kept.empty()) drop_kept(g_kept.size() - 1);
}

// keep copies size bytes at src (device memory) under key; a copy that
// cannot be made is simply not kept (metalab sends the bytes next time).
void keep(const std::string& key, const unsigned char* src, size_t size) {
  for (size_t i = 0; i < g_kept.size(); i++) {
    if (g_kept[i].first == key) {
      drop_kept(i);
      break;
    }
  }
  const size_t limit = g_dev.prop.totalGlobalMem / 4 / size_t(g_keep_share);
  if (size == 0 || size > limit) return;
  while (g_kept_bytes + size > limit && !g_kept.empty()) {
    size_t lru = 0;
    for (size_t i = 1; i < g_kept.size(); i++)
      if (g_kept[i].second.used < g_kept[lru].second.used) lru = i;
    drop_kept(lru);
  }
  void* p = nullptr;
  if (cudaMalloc(&p, size) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  must(cudaMemcpyAsync(p, src, size, cudaMemcpyDeviceToDevice, g_dev.stream), "keep buffer");
  Kept k;
  k.data = static_cast<unsigned char*>(p);
  k.size = size;
  k.used = ++g_tick;
  g_kept.emplace_back(key, k);
  g_kept_bytes += size;
}

void do_buffer(Reader& r) {
  uint32_t index = r.get<uint32_t>();
  uint8_t kind = r.get<uint8_t>();
  uint64_t size = r.get<uint64_t>();
  uint8_t source = r.get<uint8_t>();
  std::string key;
  if (source == kSourceKeep || source == kSourceRestore) key = r.str();
  if (!r.ok || source > kSourceRestore) return send_err(kErrUsage, "malformed BUFFER");
  const bool data = source == kSourceData || source == kSourceKeep;
  if (data && uint64_t(r.end - r.p) < size) return send_err(kErrUsage, "BUFFER data shorter than its size");
  if (kind == kThreadgroup) {
    if (index >= uint32_t(mtl_rt::kMaxTGBuffers)) {
      return send_err(kErrUsage, "threadgroup buffer index " + std::to_string(index) + ": the cuda backend binds [[threadgroup(0.." +
                                     std::to_string(mtl_rt::kMaxTGBuffers - 1) + ")]]");
    }
    g_tg_size[index] = size_t(size);
    g_tg_bound[index] = true;
    return send_ok(Writer());
  }
  if (index >= uint32_t(mtl_rt::kMaxBuffers)) {
    return send_err(kErrUsage, "buffer index " + std::to_string(index) + ": the cuda backend binds [[buffer(0.." +
                                   std::to_string(mtl_rt::kMaxBuffers - 1) + ")]]");
  }
  if (!need_device()) return;
  Kept* kept = nullptr;
  if (source == kSourceRestore) {
    kept = find_kept(key);
    if (!kept || kept->size != size) return send_err(kErrNotKept, "no copy of " + std::to_string(size) + " bytes kept under " + key);
    kept->used = ++g_tick;
  }
  free_buffer(int(index));
  cudaError_t e = cudaSuccess;
  unsigned char* base = take_allocation(size_t(size), &e);
  if (!base) {
    cudaGetLastError();
    return send_err(kErrOther, "cannot allocate buffer " + std::to_string(index) + " of " + std::to_string(size) +
                                   " bytes on the GPU: " + cuda_text(e));
  }
  if (kept && !(kept = find_kept(key))) {
    // The allocation released the kept copies: metalab sends the bytes.
    g_spare.push_back({base, size_t(size)});
    return send_err(kErrNotKept, "the copy kept under " + key + " was released for memory");
  }
  DevBuf& b = g_buf[index];
  b.bound = true;
  b.base = base;
  b.size = size_t(size);
  // Every copy goes on the kernels' stream, so the launch that follows
  // waits for it (the stream does not wait for the legacy default one, and
  // a copy from pageable memory may return before its DMA ends).
  cudaStream_t st = g_dev.stream;
  must(cudaMemcpyAsync(b.base, g_dev.canaries, kSlack, cudaMemcpyHostToDevice, st), "upload buffer");
  must(cudaMemcpyAsync(b.base + kSlack + b.size, g_dev.canaries + kSlack, kSlack, cudaMemcpyHostToDevice, st), "upload buffer");
  if (size == 0) return send_ok(Writer());
  if (kept) {
    must(cudaMemcpyAsync(b.base + kSlack, kept->data, b.size, cudaMemcpyDeviceToDevice, st), "restore buffer");
  } else if (data) {
    // From pageable memory the copy is staged before it returns: the
    // request's payload may be reused after it.
    must(cudaMemcpyAsync(b.base + kSlack, r.p, b.size, cudaMemcpyHostToDevice, st), "upload buffer");
    if (source == kSourceKeep) keep(key, b.base + kSlack, b.size);
  } else {
    must(cudaMemsetAsync(b.base + kSlack, 0, b.size, st), "clear buffer");
  }
  send_ok(Writer());
}

void do_read(Reader& r) {
  uint32_t index = r.get<uint32_t>();
  if (!r.ok || index >= uint32_t(mtl_rt::kMaxBuffers) || !g_buf[index].bound) return send_err(kErrUsage, "READ of an unbound buffer");
  std::vector<unsigned char> host(g_buf[index].size);
  if (!host.empty()) {
    must(cudaMemcpyAsync(host.data(), g_buf[index].base + kSlack, host.size(), cudaMemcpyDeviceToHost, g_dev.stream), "read buffer");
    must(cudaStreamSynchronize(g_dev.stream), "read buffer");
  }
  send(kOK, host.data(), host.size());
}

void do_reset() {
  for (const Spare& sp : g_spare_old) must(cudaFree(sp.base), "cudaFree");
  g_spare_old.swap(g_spare);
  g_spare.clear();
  for (int i = 0; i < mtl_rt::kMaxBuffers; i++) free_buffer(i);
  for (int i = 0; i < mtl_rt::kMaxTGBuffers; i++) {
    g_tg_size[i] = 0;
    g_tg_bound[i] = false;
  }
  send_ok(Writer());
}

// check_canaries reports the first buffer whose slack the dispatch changed,
// by 4-byte word from the buffer's ends, as the cpu runner does.
bool check_canaries(std::string* msg) {
  // All slack regions are read in one go, into pinned memory, with one
  // synchronisation: this runs after every dispatch of a timing sample.
  for (int i = 0; i < mtl_rt::kMaxBuffers; i++) {
    const DevBuf& b = g_buf[i];
    if (!b.bound) continue;
    unsigned char* at = g_dev.slack + size_t(i) * 2 * kSlack;
    must(cudaMemcpyAsync(at, b.base, kSlack, cudaMemcpyDeviceToHost, g_dev.stream), "read canaries");
    must(cudaMemcpyAsync(at + kSlack, b.base + kSlack + b.size, kSlack, cudaMemcpyDeviceToHost, g_dev.stream), "read canaries");
  }
  must(cudaStreamSynchronize(g_dev.stream), "read canaries");
  for (int i = 0; i < mtl_rt::kMaxBuffers; i++) {
    const DevBuf& b = g_buf[i];
    if (!b.bound) continue;
    const unsigned char* slack = g_dev.slack + size_t(i) * 2 * kSlack;
    for (size_t k = 0; k < kSlack; k++) {
      if (slack[kSlack + k] != canary_byte(kSlack + k)) {
        *msg = "bad access: buffer " + std::to_string(i) + ", byte offset +" + std::to_string(k / 4 * 4) +
               " past the end (size " + std::to_string(b.size) + "; canary overwritten)";
        return false;
      }
    }
    for (size_t k = kSlack; k-- > 0;) {
      if (slack[k] != canary_byte(k)) {
        *msg = "bad access: buffer " + std::to_string(i) + ", byte offset -" + std::to_string((kSlack - k + 3) / 4 * 4) +
               " before the start (size " + std::to_string(b.size) + "; canary overwritten)";
        return false;
      }
    }
  }
  return true;
}

std::string dims(const uint32_t v[3]) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

void do_dispatch(Reader& r) {
  uint32_t handle = r.get<uint32_t>();
  uint32_t groups[3], threads[3];
  for (auto& v : groups) v = r.get<uint32_t>();
  for (auto& v : threads) v = r.get<uint32_t>();
  uint32_t repeat = r.get<uint32_t>();
  uint8_t order = r.get<uint8_t>();
  uint64_t seed = r.get<uint64_t>();
  (void)order;  // the GPU schedules threads itself
  (void)seed;
  if (!r.ok || handle >= g_kernels.size()) return send_err(kErrUsage, "malformed DISPATCH");
  const Kernel* k = g_kernels[handle];
  const Device& d = g_dev;
  uint64_t T = uint64_t(threads[0]) * threads[1] * threads[2];
  if (T == 0 || T > uint64_t(k->max_threads)) {
    return send_err(kErrUsage, "threads per threadgroup " + dims(threads) + " outside 1.." + std::to_string(k->max_threads));
  }
  for (int i = 0; i < 3; i++) {
    if (threads[i] > uint32_t(d.max_block[i])) {
      return send_err(kErrUsage, "threadgroup " + dims(threads) + ": the GPU allows at most " + std::to_string(d.max_block[0]) +
                                     "x" + std::to_string(d.max_block[1]) + "x" + std::to_string(d.max_block[2]));
    }
    if (groups[i] > uint32_t(d.max_grid[i])) {
      return send_err(kErrUsage, "grid of " + dims(groups) + " threadgroups: the GPU allows at most " +
                                     std::to_string(d.max_grid[0]) + "x" + std::to_string(d.max_grid[1]) + "x" +
                                     std::to_string(d.max_grid[2]));
    }
  }
  mtl_rt::LaunchArgs args{};
  size_t dyn = 0;
  for (int i = 0; i < mtl_rt::kMaxTGBuffers; i++) {
    if (!g_tg_bound[i]) continue;
    dyn = (dyn + 15) / 16 * 16;
    args.tg_offset[i] = uint32_t(dyn);
    dyn += g_tg_size[i];
  }
  for (int i = 0; i < mtl_rt::kMaxBuffers; i++) args.buffers[i] = g_buf[i].bound ? g_buf[i].base + kSlack : nullptr;
  size_t total_smem = k->attr.sharedSizeBytes + dyn;
  if (total_smem > size_t(d.smem_optin)) {
    return send_err(kErrLaunch, "threadgroup memory: " + std::to_string(k->attr.sharedSizeBytes) + " bytes static plus " +
                                    std::to_string(dyn) + " bytes host-sized exceed the GPU's " +
                                    std::to_string(d.smem_optin) + " bytes per threadgroup");
  }
  Kernel* mk = g_kernels[handle];
  if (dyn > size_t(mk->dyn_limit)) {
    cudaError_t e = k->info->set_dynamic_smem(int(dyn));
    if (e != cudaSuccess) {
      cudaGetLastError();
      return send_err(kErrLaunch, "cannot allow " + std::to_string(dyn) + " bytes of host-sized threadgroup memory: " + cuda_text(e));
    }
    mk->dyn_limit = int(dyn);
  }
  uint64_t ngroups = uint64_t(groups[0]) * groups[1] * groups[2];
  Writer w;
  w.put<uint32_t>(0);  // no per-dispatch times: the events time them together
  float ms = 0;
  if (ngroups > 0 && repeat > 0) {
    dim3 grid(groups[0], groups[1], groups[2]), block(threads[0], threads[1], threads[2]);
    must(cudaEventRecord(d.start, d.stream), "cudaEventRecord");
    for (uint32_t rep = 0; rep < repeat; rep++) {
      cudaError_t e = k->info->launch(grid, block, dyn, d.stream, &args);
      if (e != cudaSuccess) {
        cudaError_t sticky = cudaDeviceSynchronize();
        if (sticky != cudaSuccess) fatal(sticky, "kernel " + k->name);
        cudaGetLastError();
        return send_err(kErrLaunch, "the GPU refused to launch " + k->name + " with " + dims(groups) + " threadgroups of " +
                                        dims(threads) + " threads: " + cuda_text(e));
      }
    }
    must(cudaEventRecord(d.stop, d.stream), "cudaEventRecord");
    cudaError_t e = cudaEventSynchronize(d.stop);
    if (e != cudaSuccess) fatal(e, "kernel " + k->name);
    if ((e = cudaGetLastError()) != cudaSuccess) fatal(e, "kernel " + k->name);
    must(cudaEventElapsedTime(&ms, d.start, d.stop), "cudaEventElapsedTime");
  }
  std::string msg;
  if (!check_canaries(&msg)) return send_err(kErrBadAccess, msg);
  w.put<uint32_t>(0);  // no findings
  w.put<uint64_t>(uint64_t(std::llround(double(ms) * 1e6)));
  send_ok(w);
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "-device") device = std::atoi(v), i++;
    if (a == "-keep-share") g_keep_share = std::max(1, std::atoi(v)), i++;
    if (a == "-tables") return print_tables(v);
  }
  mtl_serve::take_protocol();
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, on_fault);
  mtl_serve::watch_parent();
  init_device(device);
  mtl_serve::serve({do_hello, do_load, do_buffer, do_dispatch, do_read, do_reset});
}
