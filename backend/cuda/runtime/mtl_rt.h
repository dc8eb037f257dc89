// mtl_rt.h (cuda) — the device side of the contract between translated
// kernels, the metal_stdlib prelude and the cuda runner.
//
// The cpu backend's runtime/mtl_rt.h declares these functions and the cpu
// runner implements them for fibers. A cuda kernel TU is compiled with this
// directory ahead of the prelude's on the include path, so the prelude's
// #include "mtl_rt.h" lands here and the same prelude source runs on the
// GPU: every simd_* and quad_* function is still built on simd_exchange and
// folds the gathered lanes in lane order, which is what makes the two
// backends' results bitwise equal.
//
// What a thread sees:
//
//   - ctx() is built from threadIdx, blockIdx, blockDim and gridDim. A
//     Metal threadgroup is a CUDA block and a grid of threadgroups a CUDA
//     grid (dispatchThreadgroups semantics). thread_index_in_threadgroup is
//     x + y*X + z*X*Y, the simd group index/32 and the lane index%32, as on
//     the cpu backend.
//   - Metal's simd groups are CUDA's warps, for every block shape: CUDA
//     forms warps from the same linear thread index ("each warp contains
//     threads of consecutive, increasing thread IDs", with the thread ID of
//     a 2D or 3D block x + y*Dx + z*Dx*Dy), so lane i of simd group s is
//     lane i of warp s, whether or not the block's x is a multiple of 32.
//     A block whose size is not a multiple of 32 ends in a partial warp,
//     as its last simd group is partial on the cpu backend.
//   - threadgroup_barrier is __syncthreads(), whatever the flags: it waits
//     for the block and orders device and shared memory, a superset of
//     every mem_flags combination. The call site (file, line) is unused on
//     the GPU: threads at different barriers, or a barrier some threads
//     returned before, are undefined behaviour in CUDA (the cpu backend
//     reports them as a deadlock or a divergent barrier; run it there).
//   - simdgroup_barrier is __syncwarp() over the lanes of the warp that
//     exist (a partial warp's missing lanes are not waited for; lanes that
//     returned count as arrived, as CUDA defines for exited threads).
//   - simd_exchange gathers every participating lane's value with
//     __shfl_sync, one 32-bit word at a time, from each lane of
//     __activemask(): the lanes converged at the call. That is the cpu
//     backend's participation rule wherever the lanes that reach a
//     collective together are converged, which is every collective in
//     uniform control flow and every one in a branch that the other lanes
//     skipped to a barrier or a return. Under independent thread scheduling
//     (sm_70 and later) the GPU may also split a warp that Metal would
//     keep together; then each converged part exchanges on its own, and
//     reductions see fewer lanes than on the cpu backend. Collectives in
//     divergent control flow are what Metal itself leaves undefined.
//
// Atomics: the prelude's atomics are written with the compiler's __atomic
// builtins; in device code those names are mapped below to CUDA's atomic
// instructions (32- and 64-bit hardware operations, compare-and-swap loops
// for the rest, __threadfence for orders stronger than relaxed), as are
// the few other builtins the GPU compiler has no device form of.
#pragma once

#if !defined(__CUDACC__)
#error "backend/cuda/runtime/mtl_rt.h is the cuda backend's runtime header: compile with nvcc"
#endif

// Every standard header the prelude includes is included here first, before
// the execution-space layer below, so that layer reaches only the prelude's
// own functions. (backend/cuda's TestPreludeIncludes keeps this list
// complete.)
#include <cfloat>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#include <cuda_runtime.h>

#include "mtl_cuda_abi.h"

// MTL_FN marks a function the device runs as well as the host: the prelude
// puts it on the definitions the layer below does not reach (functions
// defined in a class body, constexpr functions that are not constant
// expressions in C++17). Under the cpu backend it is empty. (Translated
// code marks its functions MTL_DEVICE, device only: see mtl_cuda.h.)
#define MTL_FN __host__ __device__

namespace mtl_rt {

// ThreadCtx is the per-thread view of the dispatch, field for field the cpu
// backend's. All vectors are x, y, z.
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

// linear_index is thread_index_in_threadgroup: x + y*X + z*X*Y, which is
// also how CUDA numbers a block's threads into warps.
__host__ __device__ __forceinline__ uint32_t linear_index() {
#if defined(__CUDA_ARCH__)
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
#else
  return 0;
#endif
}

// ctx returns the calling thread's context. It returns a value built from
// the special registers, not a reference: bind it as
// `const mtl_rt::ThreadCtx& c = mtl_rt::ctx();` (the temporary lives as long
// as c) or read fields directly; fields nobody reads cost nothing once
// inlined. Host code has no thread: there it returns zeros.
__host__ __device__ __forceinline__ ThreadCtx ctx() {
  ThreadCtx c{};
#if defined(__CUDA_ARCH__)
  const uint32_t T[3] = {blockDim.x, blockDim.y, blockDim.z};
  const uint32_t G[3] = {gridDim.x, gridDim.y, gridDim.z};
  const uint32_t L[3] = {threadIdx.x, threadIdx.y, threadIdx.z};
  const uint32_t B[3] = {blockIdx.x, blockIdx.y, blockIdx.z};
  for (int d = 0; d < 3; d++) {
    c.thread_position_in_threadgroup[d] = L[d];
    c.threadgroup_position_in_grid[d] = B[d];
    c.threads_per_threadgroup[d] = T[d];
    c.threadgroups_per_grid[d] = G[d];
    c.threads_per_grid[d] = G[d] * T[d];
    c.thread_position_in_grid[d] = B[d] * T[d] + L[d];
  }
  const uint32_t n = T[0] * T[1] * T[2];
  const uint32_t idx = linear_index();
  c.thread_index_in_threadgroup = idx;
  c.thread_index_in_simdgroup = idx % 32;
  c.simdgroup_index_in_threadgroup = idx / 32;
  c.simdgroups_per_threadgroup = (n + 31) / 32;
  c.threads_per_simdgroup = 32;
  c.thread_index_in_quadgroup = idx % 4;
  c.quadgroup_index_in_threadgroup = idx / 4;
  c.quadgroups_per_threadgroup = (n + 3) / 4;
#endif
  return c;
}

// Barrier memory flags, as Metal's mem_flags (and the cpu backend's).
enum : unsigned {
  kMemNone = 0,
  kMemDevice = 1,
  kMemThreadgroup = 2,
  kMemTexture = 4,
  kMemAll = kMemDevice | kMemThreadgroup | kMemTexture,
};

// threadgroup_barrier_at waits for every thread of the block
// (__syncthreads). file, line and flags are the cpu backend's barrier-site
// arguments; the GPU needs none of them (see the top of this file).
__host__ __device__ __forceinline__ void threadgroup_barrier_at(const char* file, int line, unsigned flags) {
  (void)file;
  (void)line;
  (void)flags;
#if defined(__CUDA_ARCH__)
  __syncthreads();
#endif
}

// threadgroup_barrier is threadgroup_barrier_at with no known site.
__host__ __device__ __forceinline__ void threadgroup_barrier() { threadgroup_barrier_at(nullptr, 0, kMemAll); }

// warp_lanes returns the mask of the lanes the caller's warp has: all 32,
// or fewer in the partial last warp of a block.
__host__ __device__ __forceinline__ uint32_t warp_lanes() {
#if defined(__CUDA_ARCH__)
  const uint32_t n = blockDim.x * blockDim.y * blockDim.z;
  const uint32_t first = linear_index() & ~31u;
  return n - first >= 32 ? 0xffffffffu : (1u << (n - first)) - 1u;
#else
  return 0;
#endif
}

// simdgroup_barrier waits for the lanes of the caller's warp (__syncwarp
// over the lanes that exist) and orders their memory accesses.
__host__ __device__ __forceinline__ void simdgroup_barrier() {
#if defined(__CUDA_ARCH__)
  __syncwarp(warp_lanes());
#endif
}

// kMaxExchange is the largest value simd_exchange carries, as on the cpu
// backend.
constexpr size_t kMaxExchange = 512;

// simd_exchange is the one simd-group collective: each participating lane
// (those of __activemask(), see the top of this file) deposits size bytes
// from mine, and receives every lane's deposit in all (32*size bytes,
// lane-major; the slots of lanes that do not participate are zero) and the
// participation mask in *active (bit i = lane i). It moves one 32-bit word
// per shuffle: a value of w words costs 32*w shuffles.
__host__ __device__ __forceinline__ void simd_exchange(const void* mine, size_t size, void* all, uint32_t* active) {
#if defined(__CUDA_ARCH__)
  const uint32_t mask = __activemask();
  const unsigned char* src = static_cast<const unsigned char*>(mine);
  unsigned char* dst = static_cast<unsigned char*>(all);
  for (size_t off = 0; off < size; off += 4) {
    const size_t n = size - off < 4 ? size - off : 4;
    uint32_t word = 0;
    memcpy(&word, src + off, n);
#pragma unroll
    for (int j = 0; j < 32; j++) {
      uint32_t got = __shfl_sync(mask, word, j);
      if (!((mask >> j) & 1u)) got = 0;  // a lane that is not here: zero, as on the cpu
      memcpy(dst + size_t(j) * size + off, &got, n);
    }
  }
  if (active) *active = mask;
#else
  (void)mine;
  (void)size;
  (void)all;
  (void)active;
#endif
}

// tg_slot is the cpu backend's access to static threadgroup declarations.
// On the GPU a declaration is __shared__ storage of its own:
// MTL_THREADGROUP(T, name) in mtl_cuda.h. Calling tg_slot is a compile
// error that says so.
template <int Never = 0>
__host__ __device__ void* tg_slot(int) {
  static_assert(Never != 0,
                "the cuda backend has no mtl_rt::tg_slot: declare threadgroup memory with MTL_THREADGROUP(T, name) "
                "(mtl_cuda.h)");
  return nullptr;
}

// ---------------------------------------------------------------------------
// Device forms of the compiler builtins the prelude uses that nvcc's device
// compiler does not have (or has only in __global__ functions).

namespace dev {

template <class T>
__device__ __forceinline__ T* unv(volatile T* p) {
  return const_cast<T*>(p);
}
template <class T>
__device__ __forceinline__ const T* unv(const volatile T* p) {
  return const_cast<const T*>(p);
}

// fence_before and fence_after bracket an atomic operation with the
// device-scope fences its memory order asks for (relaxed: none).
__device__ __forceinline__ void fence_before(int order) {
  if (order == __ATOMIC_RELEASE || order == __ATOMIC_ACQ_REL || order == __ATOMIC_SEQ_CST) __threadfence();
}
__device__ __forceinline__ void fence_after(int order) {
  if (order == __ATOMIC_ACQUIRE || order == __ATOMIC_ACQ_REL || order == __ATOMIC_SEQ_CST) __threadfence();
}

// word_of returns the aligned 32-bit word holding the n-byte object at p (n
// = 1 or 2) and the object's bit shift in it.
__device__ __forceinline__ unsigned int* word_of(const volatile void* p, unsigned* shift) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  *shift = unsigned(a & 3u) * 8u;
  return reinterpret_cast<unsigned int*>(a & ~uintptr_t(3));
}

// cas_bits compare-and-swaps the n-byte object at p (n = 1, 2, 4, 8) from
// the bits of *expected to those of *desired; it returns whether it
// swapped and leaves the old bits in *expected.
template <class T>
__device__ __forceinline__ bool cas_bits(volatile T* p, T* expected, const T* desired) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                "cuda atomics: objects of 1, 2, 4 or 8 bytes");
  if constexpr (sizeof(T) == 8) {
    unsigned long long e, d;
    memcpy(&e, expected, 8);
    memcpy(&d, desired, 8);
    unsigned long long old = atomicCAS(reinterpret_cast<unsigned long long*>(unv(p)), e, d);
    memcpy(expected, &old, 8);
    return old == e;
  } else if constexpr (sizeof(T) == 4) {
    unsigned int e, d;
    memcpy(&e, expected, 4);
    memcpy(&d, desired, 4);
    unsigned int old = atomicCAS(reinterpret_cast<unsigned int*>(unv(p)), e, d);
    memcpy(expected, &old, 4);
    return old == e;
  } else {
    unsigned shift;
    unsigned int* w = word_of(p, &shift);
    const unsigned int m = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned int e = 0, d = 0;
    memcpy(&e, expected, sizeof(T));
    memcpy(&d, desired, sizeof(T));
    unsigned int cur = *reinterpret_cast<volatile unsigned int*>(w);
    for (;;) {
      if (((cur & m) >> shift) != e) {
        unsigned int old = (cur & m) >> shift;
        memcpy(expected, &old, sizeof(T));
        return false;
      }
      unsigned int next = (cur & ~m) | (d << shift);
      unsigned int seen = atomicCAS(w, cur, next);
      if (seen == cur) return true;
      cur = seen;
    }
  }
}

template <class T>
__device__ __forceinline__ void atomic_load(const volatile T* p, T* ret, int order) {
  if (order == __ATOMIC_SEQ_CST) __threadfence();
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    typedef typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type U;
    U v = *reinterpret_cast<const volatile U*>(p);
    memcpy(ret, &v, sizeof(T));
  } else {
    unsigned shift;
    unsigned int v = *reinterpret_cast<volatile unsigned int*>(word_of(p, &shift)) >> shift;
    memcpy(ret, &v, sizeof(T));
  }
  fence_after(order);
}

template <class T>
__device__ __forceinline__ void atomic_exchange(volatile T* p, const T* val, T* ret, int order) {
  fence_before(order);
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    typedef typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type U;
    U v, old;
    memcpy(&v, val, sizeof(T));
    old = atomicExch(reinterpret_cast<U*>(unv(p)), v);
    memcpy(ret, &old, sizeof(T));
  } else {
    T cur;
    atomic_load(p, &cur, __ATOMIC_RELAXED);
    while (!cas_bits(p, &cur, val)) {
    }
    memcpy(ret, &cur, sizeof(T));
  }
  fence_after(order);
}

template <class T>
__device__ __forceinline__ void atomic_store(volatile T* p, const T* val, int order) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    fence_before(order);
    typedef typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type U;
    U v;
    memcpy(&v, val, sizeof(T));
    *reinterpret_cast<volatile U*>(unv(p)) = v;
    if (order == __ATOMIC_SEQ_CST) __threadfence();
  } else {
    T old;
    atomic_exchange(p, val, &old, order);  // a byte store must not tear its neighbours' bytes
  }
}

template <class T>
__device__ __forceinline__ bool atomic_compare_exchange(volatile T* p, T* expected, const T* desired, bool weak, int order,
                                                       int failure_order) {
  (void)weak;  // never fails spuriously
  (void)failure_order;
  fence_before(order);
  bool ok = cas_bits(p, expected, desired);
  fence_after(order);
  return ok;
}

// The integer read-modify-write operations; T is an integer type of 4 or 8
// bytes (Metal has no narrower atomic integers).
template <class T>
using rmw_t = typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type;

#define MTL_CUDA_RMW(name, intrinsic, expr)                                          \
  template <class T, class V>                                                        \
  __device__ __forceinline__ T name(volatile T* p, V v, int order) {                 \
    static_assert(std::is_integral<T>::value && (sizeof(T) == 4 || sizeof(T) == 8),  \
                  "cuda atomics: integer read-modify-write on 4 or 8 bytes");        \
    fence_before(order);                                                             \
    typedef rmw_t<T> U;                                                              \
    U x = U(T(v));                                                                   \
    T old = T(intrinsic(reinterpret_cast<U*>(unv(p)), expr));                        \
    fence_after(order);                                                              \
    return old;                                                                      \
  }
MTL_CUDA_RMW(fetch_add, atomicAdd, x)
MTL_CUDA_RMW(fetch_sub, atomicAdd, U(0) - x)
MTL_CUDA_RMW(fetch_and, atomicAnd, x)
MTL_CUDA_RMW(fetch_or, atomicOr, x)
MTL_CUDA_RMW(fetch_xor, atomicXor, x)
#undef MTL_CUDA_RMW

__device__ __forceinline__ void thread_fence(int order) {
  if (order != __ATOMIC_RELAXED) __threadfence();
}

// ctz and isnormal have no device form in __host__ __device__ functions.
// Like the builtins, ctz of 0 is not used by the prelude; here it is the
// width.
__host__ __device__ constexpr int ctz32_portable(unsigned int x) {
  int n = 0;
  while (n < 32 && !((x >> n) & 1u)) n++;
  return n;
}
__host__ __device__ constexpr int ctz64_portable(unsigned long long x) {
  int n = 0;
  while (n < 64 && !((x >> n) & 1ull)) n++;
  return n;
}
__host__ __device__ constexpr int ctz32(unsigned int x) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return __clz(int(__brev(x)));
#endif
  return ctz32_portable(x);
}
__host__ __device__ constexpr int ctz64(unsigned long long x) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return __clzll((long long)(__brevll(x)));
#endif
  return ctz64_portable(x);
}
template <class T>
__host__ __device__ constexpr bool isnormal(T x) {
  T a = x < T(0) ? -x : x;
  return a >= std::numeric_limits<T>::min() && a <= std::numeric_limits<T>::max();
}

// add_overflow and sub_overflow are __builtin_add_overflow and
// __builtin_sub_overflow for operands and result of one integer type.
template <class T>
__host__ __device__ constexpr bool add_overflow(T a, T b, T* r) {
  typedef typename std::make_unsigned<T>::type U;
  T s = T(U(a) + U(b));
  *r = s;
  if constexpr (std::is_signed<T>::value) {
    return (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0);
  } else {
    return s < a;
  }
}
template <class T>
__host__ __device__ constexpr bool sub_overflow(T a, T b, T* r) {
  typedef typename std::make_unsigned<T>::type U;
  T s = T(U(a) - U(b));
  *r = s;
  if constexpr (std::is_signed<T>::value) {
    return (a >= 0) != (b >= 0) && (s >= 0) != (a >= 0);
  } else {
    return b > a;
  }
}

}  // namespace dev
}  // namespace mtl_rt

#if defined(__CUDA_ARCH__)
#define __atomic_load(p, ret, order) ::mtl_rt::dev::atomic_load(p, ret, order)
#define __atomic_store(p, val, order) ::mtl_rt::dev::atomic_store(p, val, order)
#define __atomic_exchange(p, val, ret, order) ::mtl_rt::dev::atomic_exchange(p, val, ret, order)
#define __atomic_compare_exchange(p, e, d, weak, so, fo) ::mtl_rt::dev::atomic_compare_exchange(p, e, d, weak, so, fo)
#define __atomic_fetch_add(p, v, order) ::mtl_rt::dev::fetch_add(p, v, order)
#define __atomic_fetch_sub(p, v, order) ::mtl_rt::dev::fetch_sub(p, v, order)
#define __atomic_fetch_and(p, v, order) ::mtl_rt::dev::fetch_and(p, v, order)
#define __atomic_fetch_or(p, v, order) ::mtl_rt::dev::fetch_or(p, v, order)
#define __atomic_fetch_xor(p, v, order) ::mtl_rt::dev::fetch_xor(p, v, order)
#define __atomic_thread_fence(order) ::mtl_rt::dev::thread_fence(order)
#define __builtin_ctz(x) ::mtl_rt::dev::ctz32(x)
#define __builtin_ctzll(x) ::mtl_rt::dev::ctz64(x)
#define __builtin_isnormal(x) ::mtl_rt::dev::isnormal(x)
#define __builtin_add_overflow(a, b, r) ::mtl_rt::dev::add_overflow(a, b, r)
#define __builtin_sub_overflow(a, b, r) ::mtl_rt::dev::sub_overflow(a, b, r)
#endif

// The execution-space layer: nvcc compiles a function for the GPU only when
// it is marked __device__, and the prelude is plain C++17. Rather than mark
// each of its functions, `inline` itself means `__host__ __device__ inline`
// from here to the end of the prelude (mtl_cuda.h, which a TU includes
// after <metal_stdlib>, ends it). constexpr functions are callable from
// device code through nvcc's --expt-relaxed-constexpr, which the cuda
// backend always passes. What neither reaches carries MTL_FN.
#define inline __host__ __device__ inline
