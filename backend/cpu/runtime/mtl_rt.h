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

// threadgroup_barrier blocks until every thread of the threadgroup has
// reached a threadgroup barrier. A barrier that some threads never reach
// (they returned) is reported by the runner as a deadlock.
void threadgroup_barrier();

// simdgroup_barrier blocks until every live lane of the caller's simd group
// has reached a simdgroup barrier or a collective.
void simdgroup_barrier();

// simd_exchange is the one simd-group collective: each participating lane of
// the caller's simd group deposits size bytes (size <= 512) from mine; when no
// lane of the simd group can run any further, the lanes waiting here are
// released and each receives all deposits in all (32*size bytes, lane-major;
// slots of lanes that did not participate are zero) and the participation
// mask in *active (bit i = lane i). Every simd_* and quad_* function in the
// prelude is built on it, reducing in a fixed lane order.
void simd_exchange(const void* mine, size_t size, void* all, uint32_t* active);

// tg_slot returns the storage of static threadgroup declaration `slot` (a TU
// wide id assigned by the translator) for the caller's threadgroup. The
// storage is zero-filled at the start of each threadgroup.
void* tg_slot(int slot);

// A TGSlot describes one static threadgroup declaration reachable from a
// kernel; the runner lays slots out in table order, each aligned to its
// align, the total rounded up to 16 bytes (Metal's rule).
struct TGSlot {
  int id;
  size_t size;
  size_t align;
  const char* name;  // declaration name, for reports
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
};

}  // namespace mtl_rt

// Every TU exports this symbol: the table of its kernels.
extern "C" const mtl_rt::KernelInfo* mtl_kernels(int* count);
