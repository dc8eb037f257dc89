// metal_atomic.h — Metal atomics on device and threadgroup memory.
//
// Both address spaces are plain memory here. Device memory is shared by
// threadgroups that run in parallel on several OS threads, so every
// operation is a real atomic operation (the compiler's __atomic builtins on
// the value's own storage, so an atomic_int is laid out exactly like an
// int). Read-modify-write operations with no hardware form (float add,
// min, max) are compare-and-swap loops. Compare-exchange never fails
// spuriously.
#pragma once
#include "metal_scalar.h"
#include "metal_sync.h"

namespace metal {

enum memory_order {
  memory_order_relaxed = __ATOMIC_RELAXED,
  memory_order_acquire = __ATOMIC_ACQUIRE,
  memory_order_release = __ATOMIC_RELEASE,
  memory_order_acq_rel = __ATOMIC_ACQ_REL,
  memory_order_seq_cst = __ATOMIC_SEQ_CST,
};

// atomic is Metal's atomic<T>: a T accessed only through the atomic_*
// functions.
template <class T>
struct atomic {
  T mtl_v;
};

typedef atomic<int> atomic_int;
typedef atomic<uint> atomic_uint;
typedef atomic<bool> atomic_bool;
typedef atomic<float> atomic_float;
typedef atomic<long> atomic_long;
typedef atomic<ulong> atomic_ulong;

static_assert(sizeof(atomic_int) == 4 && alignof(atomic_float) == 4, "atomic layout");

namespace mtl_detail {

// load_order and fail_order keep a memory order valid for loads and failed
// compare-exchanges.
constexpr int load_order(memory_order o) {
  return o == memory_order_release ? __ATOMIC_RELAXED : o == memory_order_acq_rel ? __ATOMIC_ACQUIRE : int(o);
}

// cas_update applies f to the value at p atomically and returns the old
// value.
template <class T, class F>
inline T cas_update(volatile T* p, memory_order o, F f) {
  T old;
  __atomic_load(p, &old, load_order(o));
  T next;
  do {
    next = f(old);
  } while (!__atomic_compare_exchange(p, &old, &next, false, int(o), load_order(o)));
  return old;
}

}  // namespace mtl_detail

template <class T>
inline void atomic_store_explicit(volatile atomic<T>* obj, typename mtl_detail::id<T>::type v, memory_order o) {
  T x = v;
  __atomic_store(&obj->mtl_v, &x, o == memory_order_acquire || o == memory_order_acq_rel ? __ATOMIC_SEQ_CST : int(o));
}
template <class T>
inline T atomic_load_explicit(const volatile atomic<T>* obj, memory_order o) {
  T x;
  __atomic_load(&obj->mtl_v, &x, mtl_detail::load_order(o));
  return x;
}
template <class T>
inline T atomic_exchange_explicit(volatile atomic<T>* obj, typename mtl_detail::id<T>::type v, memory_order o) {
  T x = v, old;
  __atomic_exchange(&obj->mtl_v, &x, &old, int(o));
  return old;
}
template <class T>
inline bool atomic_compare_exchange_weak_explicit(volatile atomic<T>* obj, T* expected, typename mtl_detail::id<T>::type desired,
                                                  memory_order success, memory_order failure) {
  T d = desired;
  return __atomic_compare_exchange(&obj->mtl_v, expected, &d, false, int(success), mtl_detail::load_order(failure));
}
template <class T>
inline bool atomic_compare_exchange_strong_explicit(volatile atomic<T>* obj, T* expected, typename mtl_detail::id<T>::type desired,
                                                    memory_order success, memory_order failure) {
  return atomic_compare_exchange_weak_explicit(obj, expected, desired, success, failure);
}

#define MTL_ATOMIC_RMW(name, builtin, expr)                                                           \
  template <class T>                                                                                  \
  inline T atomic_fetch_##name##_explicit(volatile atomic<T>* obj, typename mtl_detail::id<T>::type v,    \
                                          memory_order o) {                                           \
    if constexpr (std::is_integral<T>::value) {                                                       \
      return builtin(&obj->mtl_v, v, int(o));                                                         \
    } else {                                                                                          \
      return mtl_detail::cas_update(&obj->mtl_v, o, [&](T a) { return T(expr); });                       \
    }                                                                                                 \
  }
MTL_ATOMIC_RMW(add, __atomic_fetch_add, a + v)
MTL_ATOMIC_RMW(sub, __atomic_fetch_sub, a - v)
MTL_ATOMIC_RMW(and, __atomic_fetch_and, a & v)
MTL_ATOMIC_RMW(or, __atomic_fetch_or, a | v)
MTL_ATOMIC_RMW(xor, __atomic_fetch_xor, a ^ v)
#undef MTL_ATOMIC_RMW

template <class T>
inline T atomic_fetch_min_explicit(volatile atomic<T>* obj, typename mtl_detail::id<T>::type v, memory_order o) {
  T x = v;
  return mtl_detail::cas_update(&obj->mtl_v, o, [&](T a) { return x < a ? x : a; });
}
template <class T>
inline T atomic_fetch_max_explicit(volatile atomic<T>* obj, typename mtl_detail::id<T>::type v, memory_order o) {
  T x = v;
  return mtl_detail::cas_update(&obj->mtl_v, o, [&](T a) { return a < x ? x : a; });
}

// thread_scope is the scope argument of atomic_thread_fence.
enum thread_scope {
  thread_scope_thread = 0,
  thread_scope_simdgroup = 1,
  thread_scope_threadgroup = 2,
  thread_scope_device = 3,
};

// atomic_thread_fence orders memory; every scope gets a full fence here.
inline void atomic_thread_fence(mem_flags, memory_order o, thread_scope = thread_scope_device) {
  __atomic_thread_fence(int(o));
}

// The forms without _explicit use memory_order_relaxed, Metal's only
// guaranteed order.
template <class T>
inline void atomic_store(volatile atomic<T>* obj, typename mtl_detail::id<T>::type v) { atomic_store_explicit(obj, v, memory_order_relaxed); }
template <class T>
inline T atomic_load(const volatile atomic<T>* obj) { return atomic_load_explicit(obj, memory_order_relaxed); }

}  // namespace metal
