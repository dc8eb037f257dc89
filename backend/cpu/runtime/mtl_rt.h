// mtl_rt.h — the contract between translated kernels, the metal_stdlib
// prelude and the cpu runner.
//
// A translated translation unit (TU) is compiled into a shared object that the
// runner loads. The runner executes each threadgroup's threads as cooperative
// fibers on one OS thread; the functions below are how a thread (fiber) talks
// to its threadgroup.
#pragma once
#include <cstddef>
#include <cstdint>

namespace mtl_rt {

// ThreadCtx is the per-thread (per-fiber) view of the dispatch. All vectors
// are x, y, z.
struct ThreadCtx {
  uint32_t thread_position_in_grid[3];
  uint32_t thread_position_in_threadgroup[3];
  uint32_t threadgroup_position_in_grid[3];
  uint32_t threads_per_threadgroup[3];
  uint32_t threadgroups_per_grid[3];
  uint32_t threads_per_grid[3];
  uint32_t thread_index_in_threadgroup;
  uint32_t thread_index_in_simdgroup;     // lane, 0..31
  uint32_t simdgroup_index_in_threadgroup;
  uint32_t simdgroups_per_threadgroup;
  uint32_t threads_per_simdgroup;         // 32
  uint32_t thread_index_in_quadgroup;     // lane % 4
  uint32_t quadgroup_index_in_threadgroup;
  uint32_t quadgroups_per_threadgroup;
};

// ctx returns the calling fiber's context.
const ThreadCtx& ctx();

// Barrier memory flags, as Metal's mem_flags: which memory a barrier
// orders. The checking mode honours them: a barrier without kMemThreadgroup
// does not end a threadgroup-memory interval.
enum : unsigned {
  kMemNone = 0,
  kMemDevice = 1,
  kMemThreadgroup = 2,
  kMemTexture = 4,
  kMemAll = kMemDevice | kMemThreadgroup | kMemTexture,
};

// threadgroup_barrier_at blocks until every thread of the threadgroup has
// reached a threadgroup barrier. file and line name the barrier's call site
// (the prelude passes the .metal line): threads waiting at different
// barriers are a deadlock, and threads that returned count as arrived (a
// divergent barrier, reported as a warning). flags are mem_flags bits.
void threadgroup_barrier_at(const char* file, int line, unsigned flags);

// threadgroup_barrier is threadgroup_barrier_at with no known site,
// ordering all memory.
void threadgroup_barrier();

// simdgroup_barrier blocks until every live lane of the caller's simd group
// has reached a simdgroup barrier or a collective.
void simdgroup_barrier();

// simd_exchange is the one simd-group collective: each participating lane of
// the caller's simd group deposits size bytes (size <= 512) from mine; when
// every live lane of the simd group has stopped (at this collective, at a
// threadgroup barrier, or returned), the lanes waiting here are released and
// each receives all deposits in all (32*size bytes, lane-major; slots of
// lanes that did not participate are zero) and the participation mask in
// *active (bit i = lane i). Other simd groups are not waited for. Every
// simd_* and quad_* function in the prelude is built on it, reducing in a
// fixed lane order.
void simd_exchange(const void* mine, size_t size, void* all, uint32_t* active);

// tg_slot returns the storage of static threadgroup declaration `slot` (a TU
// wide id assigned by the translator) for the caller's threadgroup. The
// storage is poisoned (every byte 0xff) at the start of each threadgroup.
void* tg_slot(int slot);

// A TGSlot describes one static threadgroup declaration reachable from a
// kernel; the runner lays slots out in table order, each aligned to its
// align, the total rounded up to 16 bytes (Metal's rule). elem_size, rank
// and extents describe an array declaration's element type and dimensions
// (rank 0: a scalar or struct) so reports can give element coordinates.
struct TGSlot {
  int id;
  size_t size;
  size_t align;
  const char* name;  // declaration name, for reports
  size_t elem_size;  // 0: unknown (report bytes)
  int rank;
  size_t extents[4];
};

// A BufferParam describes one [[buffer(n)]] parameter of an entry point.
struct BufferParam {
  int index;
  const char* name;   // parameter name, for reports
  int writable;       // a non-const device pointer or reference
  size_t elem_size;   // pointee size
};

// A KernelInfo is one entry point of a TU.
struct KernelInfo {
  const char* name;  // kernel function name, or host_name for template instantiations
  // run executes one thread of the kernel. buffers[i] is the buffer bound at
  // [[buffer(i)]] (or implicit position i), tgbufs[i] the host-sized
  // threadgroup memory bound at [[threadgroup(i)]]. Thread attributes come
  // from ctx().
  void (*run)(void* const* buffers, void* const* tgbufs);
  int nslots;
  const TGSlot* slots;
  int max_threads;  // maximum threads per threadgroup (1024)
  int nbufs;  // buffer parameters; 0 with bufs == nullptr: unknown (all writable)
  const BufferParam* bufs;
};

}  // namespace mtl_rt

// Every TU exports this symbol: the table of its kernels.
extern "C" const mtl_rt::KernelInfo* mtl_kernels(int* count);
