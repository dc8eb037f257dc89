// metal_simd.h — simd-group and quad-group functions.
//
// Each function is one collective through mtl_rt::simd_exchange: every
// participating lane deposits its value and receives all of them. Reductions
// and scans then fold in the emulator's fixed order: lane 0, 1, ..., 31 over
// the participating lanes, a sequential left fold ((v0 op v1) op v2) ...
// starting from the lowest participating lane. Every lane computes the same
// fold from the same data, so all lanes get bitwise identical results, and
// results do not depend on the fiber order. Scans start from the identity
// (0 for sums, 1 for products) and fold the participating lanes below the
// caller (exclusive) or up to it (inclusive). A quad is 4 consecutive lanes;
// quad functions fold only the participating lanes of the caller's quad.
#pragma once
#include "metal_scalar.h"
#include "metal_vector.h"

namespace metal {

// simd_vote is the result of simd_ballot and simd_active_threads_mask: bit i
// is lane i. all() is true when the bits of all 32 lanes are set, as the
// Metal specification words it ("use all() with simd_ballot(expr) to
// determine if all threads are active"): in a partial SIMD-group or a branch
// some lanes skip, simd_ballot(true).all() is false. simd_all(expr) is the
// test over the active lanes only.
struct simd_vote {
  typedef uint64_t vote_t;
  vote_t v;
  constexpr explicit simd_vote(vote_t x = 0) : v(x) {}
  constexpr operator vote_t() const { return v; }
  constexpr bool all() const { return v == active_mask(); }
  constexpr bool any() const { return v != 0; }
  static constexpr vote_t active_mask() { return 0xffffffffull; }
};

// quad_vote is the result of quad_ballot: bit i is lane i of the quad.
typedef simd_vote quad_vote;

namespace mtl_detail {

constexpr int kSimdWidth = 32;

// lanes is what simd_exchange returns: every lane's value and the mask of
// participating lanes.
template <class T>
struct lanes {
  T v[kSimdWidth];
  uint32_t active;
};

// exchange deposits x and collects every lane's deposit.
template <class T>
inline lanes<T> exchange(const T& x) {
  static_assert(sizeof(T) <= 512, "simd-group value larger than 512 bytes");
  static_assert(std::is_trivially_copyable<T>::value, "simd-group values must be trivially copyable");
  lanes<T> l;
  mtl_rt::simd_exchange(&x, sizeof(T), l.v, &l.active);
  return l;
}

inline uint32_t my_lane() { return mtl_rt::ctx().thread_index_in_simdgroup; }

// fold_lanes left-folds op over the values of the lanes in mask, lowest lane
// first; it returns init when mask is empty.
template <class T, class Op>
inline T fold_lanes(const T* v, uint32_t mask, T init, Op op) {
  T acc = init;
  bool first = true;
  for (int i = 0; i < kSimdWidth; i++) {
    if (!((mask >> i) & 1u)) continue;
    acc = first ? v[i] : T(op(acc, v[i]));
    first = false;
  }
  return acc;
}

// scan_lanes is fold_lanes over the lanes of mask below lane (exclusive) or
// up to and including it (inclusive), starting from init (the identity).
template <class T, class Op>
inline T scan_lanes(const T* v, uint32_t mask, uint32_t lane, bool inclusive, T init, Op op) {
  uint32_t below = lane >= 31 ? 0xffffffffu >> (inclusive ? 0 : 1) : ((1u << (lane + (inclusive ? 1 : 0))) - 1u);
  T acc = init;
  for (int i = 0; i < kSimdWidth; i++) {
    if (!(((mask & below) >> i) & 1u)) continue;
    acc = T(op(acc, v[i]));
  }
  return acc;
}

struct op_add {
  template <class T>
  MTL_FN T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral<T>::value && std::is_signed<T>::value) {
      typedef typename std::make_unsigned<T>::type U;
      return T(U(a) + U(b));
    } else {
      return T(a + b);
    }
  }
};
struct op_mul {
  template <class T>
  MTL_FN T operator()(const T& a, const T& b) const {
    if constexpr (std::is_integral<T>::value && std::is_signed<T>::value) {
      typedef typename std::make_unsigned<T>::type U;
      return T(U(a) * U(b));
    } else {
      return T(a * b);
    }
  }
};
struct op_and {
  template <class T>
  MTL_FN T operator()(const T& a, const T& b) const { return T(a & b); }
};
struct op_or {
  template <class T>
  MTL_FN T operator()(const T& a, const T& b) const { return T(a | b); }
};
struct op_xor {
  template <class T>
  MTL_FN T operator()(const T& a, const T& b) const { return T(a ^ b); }
};

// scalar_min and scalar_max order floats like metal::fmin and fmax: a NaN
// loses, and -0 is below +0.
template <class T>
inline T scalar_min(T a, T b) {
  if constexpr (is_floating<T>::value) {
    if (b != b) return a;
    if (a != a) return b;
    if (a == b) return __builtin_signbit(float(a)) ? a : b;
  }
  return b < a ? b : a;
}
template <class T>
inline T scalar_max(T a, T b) {
  if constexpr (is_floating<T>::value) {
    if (b != b) return a;
    if (a != a) return b;
    if (a == b) return __builtin_signbit(float(a)) ? b : a;
  }
  return a < b ? b : a;
}
struct op_min {
  template <class T>
  MTL_FN T operator()(const T& a, const T& b) const {
    if constexpr (is_vec<T>::value) {
      T r = a;
      for (int i = 0; i < T::mtl_vec_size; i++) r[i] = scalar_min(a[i], b[i]);
      return r;
    } else {
      return scalar_min(a, b);
    }
  }
};
struct op_max {
  template <class T>
  MTL_FN T operator()(const T& a, const T& b) const {
    if constexpr (is_vec<T>::value) {
      T r = a;
      for (int i = 0; i < T::mtl_vec_size; i++) r[i] = scalar_max(a[i], b[i]);
      return r;
    } else {
      return scalar_max(a, b);
    }
  }
};

// vec_value strips a swizzle proxy to its vector value type.
template <class T, class = void>
struct value_of { typedef T type; };
template <class T>
struct value_of<T, typename std::enable_if<is_vec<T>::value>::type> {
  typedef vec<typename T::mtl_vec_element, T::mtl_vec_size> type;
};
template <class T>
using value_t = typename value_of<T>::type;

template <class T, class Op>
inline T reduce(const T& x, Op op) {
  lanes<T> l = exchange(x);
  return fold_lanes(l.v, l.active, T(0), op);
}

template <class T, class Op>
inline T scan(const T& x, bool inclusive, T init, Op op) {
  lanes<T> l = exchange(x);
  return scan_lanes(l.v, l.active, my_lane(), inclusive, init, op);
}

inline uint32_t quad_mask(uint32_t lane) { return 0xfu << (lane & ~3u); }

}  // namespace mtl_detail

#define MTL_SIMD_REDUCE(name, op)                                            \
  template <class T, class V = mtl_detail::value_t<T>>                           \
  inline V simd_##name(const T& x) {                                         \
    return mtl_detail::reduce(V(x), mtl_detail::op());                               \
  }                                                                          \
  template <class T, class V = mtl_detail::value_t<T>>                           \
  inline V quad_##name(const T& x) {                                         \
    mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));                             \
    return mtl_detail::fold_lanes(l.v, l.active & mtl_detail::quad_mask(mtl_detail::my_lane()), V(0), mtl_detail::op()); \
  }
MTL_SIMD_REDUCE(sum, op_add)
MTL_SIMD_REDUCE(product, op_mul)
MTL_SIMD_REDUCE(min, op_min)
MTL_SIMD_REDUCE(max, op_max)
MTL_SIMD_REDUCE(and, op_and)
MTL_SIMD_REDUCE(or, op_or)
MTL_SIMD_REDUCE(xor, op_xor)
#undef MTL_SIMD_REDUCE

// simd_prod is the older spelling of simd_product.
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_prod(const T& x) {
  return simd_product(x);
}

#define MTL_SIMD_SCAN(name, inclusive, init, op)                                                        \
  template <class T, class V = mtl_detail::value_t<T>>                                                      \
  inline V simd_##name(const T& x) {                                                                    \
    return mtl_detail::scan(V(x), inclusive, V(init), mtl_detail::op());                                        \
  }                                                                                                     \
  template <class T, class V = mtl_detail::value_t<T>>                                                      \
  inline V quad_##name(const T& x) {                                                                    \
    mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));                                                        \
    uint32_t lane = mtl_detail::my_lane();                                                                  \
    return mtl_detail::scan_lanes(l.v, l.active & mtl_detail::quad_mask(lane), lane, inclusive, V(init), mtl_detail::op()); \
  }
MTL_SIMD_SCAN(prefix_inclusive_sum, true, 0, op_add)
MTL_SIMD_SCAN(prefix_exclusive_sum, false, 0, op_add)
MTL_SIMD_SCAN(prefix_inclusive_product, true, 1, op_mul)
MTL_SIMD_SCAN(prefix_exclusive_product, false, 1, op_mul)
#undef MTL_SIMD_SCAN

// simd_shuffle returns the value of lane; a lane that does not participate
// reads as zero.
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_shuffle(const T& x, ushort lane) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  return l.v[lane & 31];
}
// simd_broadcast is simd_shuffle with a lane that must be the same for all.
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_broadcast(const T& x, ushort lane) {
  return simd_shuffle(x, lane);
}
// simd_broadcast_first returns the value of the lowest participating lane.
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_broadcast_first(const T& x) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  return l.v[l.active ? __builtin_ctz(l.active) : 0];
}
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_shuffle_xor(const T& x, ushort mask) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  return l.v[(mtl_detail::my_lane() ^ mask) & 31];
}
// simd_shuffle_up returns the value of lane - delta; the lowest delta lanes
// keep their own value.
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_shuffle_up(const T& x, ushort delta) {
  V mine(x);
  mtl_detail::lanes<V> l = mtl_detail::exchange(mine);
  uint32_t lane = mtl_detail::my_lane();
  return lane >= delta ? l.v[lane - delta] : mine;
}
// simd_shuffle_down returns the value of lane + delta; the highest delta
// lanes keep their own value.
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_shuffle_down(const T& x, ushort delta) {
  V mine(x);
  mtl_detail::lanes<V> l = mtl_detail::exchange(mine);
  uint32_t lane = mtl_detail::my_lane();
  return lane + delta < uint32_t(mtl_detail::kSimdWidth) ? l.v[lane + delta] : mine;
}
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_shuffle_rotate_up(const T& x, ushort delta) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  return l.v[(mtl_detail::my_lane() - delta) & 31];
}
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_shuffle_rotate_down(const T& x, ushort delta) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  return l.v[(mtl_detail::my_lane() + delta) & 31];
}

// simd_shuffle_and_fill_down returns the value of lane + delta, taking
// lanes past the end from fill (lane + delta - 32); simd_shuffle_and_fill_up
// returns lane - delta, taking lanes before the start from fill
// (32 - delta + lane).
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_shuffle_and_fill_down(const T& x, const T& fill, ushort delta) {
  struct pair { V v, f; };
  mtl_detail::lanes<pair> l = mtl_detail::exchange(pair{V(x), V(fill)});
  uint32_t j = mtl_detail::my_lane() + delta;
  return j < 32u ? l.v[j].v : l.v[(j - 32u) & 31u].f;
}
template <class T, class V = mtl_detail::value_t<T>>
inline V simd_shuffle_and_fill_up(const T& x, const T& fill, ushort delta) {
  struct pair { V v, f; };
  mtl_detail::lanes<pair> l = mtl_detail::exchange(pair{V(x), V(fill)});
  uint32_t lane = mtl_detail::my_lane();
  return lane >= delta ? l.v[lane - delta].v : l.v[(32u - delta + lane) & 31u].f;
}

// quad_shuffle returns the value of lane quad_lane of the caller's quad.
template <class T, class V = mtl_detail::value_t<T>>
inline V quad_shuffle(const T& x, ushort quad_lane) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  return l.v[(mtl_detail::my_lane() & ~3u) | (quad_lane & 3u)];
}
template <class T, class V = mtl_detail::value_t<T>>
inline V quad_broadcast(const T& x, ushort quad_lane) {
  return quad_shuffle(x, quad_lane);
}
template <class T, class V = mtl_detail::value_t<T>>
inline V quad_broadcast_first(const T& x) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  uint32_t q = l.active & mtl_detail::quad_mask(mtl_detail::my_lane());
  return l.v[q ? __builtin_ctz(q) : 0];
}
template <class T, class V = mtl_detail::value_t<T>>
inline V quad_shuffle_xor(const T& x, ushort mask) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  uint32_t lane = mtl_detail::my_lane();
  return l.v[(lane & ~3u) | ((lane ^ mask) & 3u)];
}
template <class T, class V = mtl_detail::value_t<T>>
inline V quad_shuffle_up(const T& x, ushort delta) {
  V mine(x);
  mtl_detail::lanes<V> l = mtl_detail::exchange(mine);
  uint32_t lane = mtl_detail::my_lane();
  return (lane & 3u) >= delta ? l.v[lane - delta] : mine;
}
template <class T, class V = mtl_detail::value_t<T>>
inline V quad_shuffle_down(const T& x, ushort delta) {
  V mine(x);
  mtl_detail::lanes<V> l = mtl_detail::exchange(mine);
  uint32_t lane = mtl_detail::my_lane();
  return (lane & 3u) + delta < 4u ? l.v[lane + delta] : mine;
}
template <class T, class V = mtl_detail::value_t<T>>
inline V quad_shuffle_rotate_up(const T& x, ushort delta) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  uint32_t lane = mtl_detail::my_lane();
  return l.v[(lane & ~3u) | ((lane - delta) & 3u)];
}
template <class T, class V = mtl_detail::value_t<T>>
inline V quad_shuffle_rotate_down(const T& x, ushort delta) {
  mtl_detail::lanes<V> l = mtl_detail::exchange(V(x));
  uint32_t lane = mtl_detail::my_lane();
  return l.v[(lane & ~3u) | ((lane + delta) & 3u)];
}

// simd_ballot returns the mask of participating lanes whose cond is true.
inline simd_vote simd_ballot(bool cond) {
  mtl_detail::lanes<bool> l = mtl_detail::exchange(cond);
  uint64_t m = 0;
  for (int i = 0; i < mtl_detail::kSimdWidth; i++)
    if (((l.active >> i) & 1u) && l.v[i]) m |= uint64_t(1) << i;
  return simd_vote(m);
}
// simd_active_threads_mask returns the mask of participating lanes.
inline simd_vote simd_active_threads_mask() {
  mtl_detail::lanes<bool> l = mtl_detail::exchange(true);
  return simd_vote(l.active);
}
inline bool simd_all(bool cond) {
  mtl_detail::lanes<bool> l = mtl_detail::exchange(cond);
  for (int i = 0; i < mtl_detail::kSimdWidth; i++)
    if (((l.active >> i) & 1u) && !l.v[i]) return false;
  return true;
}
inline bool simd_any(bool cond) {
  mtl_detail::lanes<bool> l = mtl_detail::exchange(cond);
  for (int i = 0; i < mtl_detail::kSimdWidth; i++)
    if (((l.active >> i) & 1u) && l.v[i]) return true;
  return false;
}
// simd_is_first reports whether the caller is the lowest participating lane.
inline bool simd_is_first() {
  mtl_detail::lanes<bool> l = mtl_detail::exchange(true);
  return l.active && uint32_t(__builtin_ctz(l.active)) == mtl_detail::my_lane();
}

inline quad_vote quad_ballot(bool cond) {
  uint32_t lane = mtl_detail::my_lane();
  uint64_t m = uint64_t(simd_ballot(cond)) & mtl_detail::quad_mask(lane);
  return simd_vote(m >> (lane & ~3u));
}
inline quad_vote quad_active_threads_mask() {
  uint32_t lane = mtl_detail::my_lane();
  uint64_t m = uint64_t(simd_active_threads_mask()) & mtl_detail::quad_mask(lane);
  return simd_vote(m >> (lane & ~3u));
}
inline bool quad_all(bool cond) {
  mtl_detail::lanes<bool> l = mtl_detail::exchange(cond);
  uint32_t q = l.active & mtl_detail::quad_mask(mtl_detail::my_lane());
  for (int i = 0; i < mtl_detail::kSimdWidth; i++)
    if (((q >> i) & 1u) && !l.v[i]) return false;
  return true;
}
inline bool quad_any(bool cond) {
  mtl_detail::lanes<bool> l = mtl_detail::exchange(cond);
  uint32_t q = l.active & mtl_detail::quad_mask(mtl_detail::my_lane());
  for (int i = 0; i < mtl_detail::kSimdWidth; i++)
    if (((q >> i) & 1u) && l.v[i]) return true;
  return false;
}
inline bool quad_is_first() {
  mtl_detail::lanes<bool> l = mtl_detail::exchange(true);
  uint32_t q = l.active & mtl_detail::quad_mask(mtl_detail::my_lane());
  return q && uint32_t(__builtin_ctz(q)) == mtl_detail::my_lane();
}

}  // namespace metal
