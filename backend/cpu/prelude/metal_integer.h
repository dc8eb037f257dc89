// metal_integer.h — Metal's integer functions for scalars and vectors of
// every integer type: abs, min, max, clamp, absdiff, popcount, clz, ctz,
// reverse_bits, rotate, extract_bits, insert_bits, mulhi, madhi, madsat,
// mul24, mad24, hadd, rhadd, addsat, subsat (and the OpenCL spellings
// abs_diff, add_sat, sub_sat). Signed arithmetic that can overflow is done
// in the unsigned type, so it wraps as on the GPU instead of being
// undefined.
#pragma once
#include "metal_scalar.h"
#include "metal_vector.h"

namespace metal {

namespace mtl_detail {

// is_int is true for the integer types other than bool.
template <class T>
struct is_int : std::integral_constant<bool, std::is_integral<T>::value && !std::is_same<T, bool>::value> {};
// is_int32 is is_int for 32-bit integers (mul24, mad24).
template <class T>
struct is_int32 : std::integral_constant<bool, is_int<T>::value && sizeof(T) == 4> {};

template <class T>
using uint_of = typename std::make_unsigned<T>::type;

template <class T>
constexpr int bit_width() { return int(sizeof(T) * 8); }

// wide holds the exact product of two T for mulhi.
template <class T>
struct wide { typedef typename std::conditional<std::is_signed<T>::value, __int128, unsigned __int128>::type type; };

}  // namespace mtl_detail

#define MTL_IF_INT(I) typename std::enable_if<mtl_detail::is_int<I>::value, int>::type = 0
#define MTL_IF_INT32(I) typename std::enable_if<mtl_detail::is_int32<I>::value, int>::type = 0

template <class I, MTL_IF_INT(I)>
constexpr I abs(I x) {
  return x < 0 ? I(mtl_detail::uint_of<I>(0) - mtl_detail::uint_of<I>(x)) : x;
}
template <class I, MTL_IF_INT(I)>
constexpr I min(I x, I y) {
  return y < x ? y : x;
}
template <class I, MTL_IF_INT(I)>
constexpr I max(I x, I y) {
  return x < y ? y : x;
}
template <class I, MTL_IF_INT(I)>
constexpr I clamp(I x, I lo, I hi) {
  return min(max(x, lo), hi);
}
// abs_diff returns |x - y| in the unsigned type, without overflow.
template <class I, MTL_IF_INT(I)>
constexpr mtl_detail::uint_of<I> abs_diff(I x, I y) {
  typedef mtl_detail::uint_of<I> U;
  return x > y ? U(U(x) - U(y)) : U(U(y) - U(x));
}
template <class I, MTL_IF_INT(I)>
constexpr I popcount(I x) {
  return I(__builtin_popcountll((unsigned long long)mtl_detail::uint_of<I>(x)));
}
// clz counts leading zeros; clz(0) is the bit width.
template <class I, MTL_IF_INT(I)>
constexpr I clz(I x) {
  unsigned long long u = (unsigned long long)mtl_detail::uint_of<I>(x);
  return u == 0 ? I(mtl_detail::bit_width<I>()) : I(__builtin_clzll(u) - (64 - mtl_detail::bit_width<I>()));
}
// ctz counts trailing zeros; ctz(0) is the bit width.
template <class I, MTL_IF_INT(I)>
constexpr I ctz(I x) {
  unsigned long long u = (unsigned long long)mtl_detail::uint_of<I>(x);
  return u == 0 ? I(mtl_detail::bit_width<I>()) : I(__builtin_ctzll(u));
}
template <class I, MTL_IF_INT(I)>
constexpr I reverse_bits(I x) {
  typedef mtl_detail::uint_of<I> U;
  U u = U(x), r = 0;
  for (int i = 0; i < mtl_detail::bit_width<I>(); i++) r = U(r | (((u >> i) & 1u) << (mtl_detail::bit_width<I>() - 1 - i)));
  return I(r);
}
// rotate rotates x left by n modulo the bit width.
template <class I, MTL_IF_INT(I)>
constexpr I rotate(I x, I n) {
  typedef mtl_detail::uint_of<I> U;
  const int w = mtl_detail::bit_width<I>();
  int s = int(U(n) % U(w));
  U u = U(x);
  return s == 0 ? x : I(U(u << s) | U(u >> (w - s)));
}
// extract_bits returns bits [offset, offset+bits) of x, sign-extended for
// signed types.
template <class I, MTL_IF_INT(I)>
constexpr I extract_bits(I x, uint offset, uint bits) {
  typedef mtl_detail::uint_of<I> U;
  const int w = mtl_detail::bit_width<I>();
  if (bits == 0) return I(0);
  U u = U(U(x) >> offset);
  if (int(bits) < w) {
    U mask = U((U(1) << bits) - 1u);
    u = U(u & mask);
    if (std::is_signed<I>::value && ((u >> (bits - 1)) & 1u)) u = U(u | U(~mask));
  }
  return I(u);
}
// insert_bits replaces bits [offset, offset+bits) of base with the low bits
// of insert.
template <class I, MTL_IF_INT(I)>
constexpr I insert_bits(I base, I insert, uint offset, uint bits) {
  typedef mtl_detail::uint_of<I> U;
  const int w = mtl_detail::bit_width<I>();
  if (bits == 0) return base;
  U mask = int(bits) >= w ? U(~U(0)) : U((U(1) << bits) - 1u);
  mask = U(mask << offset);
  return I(U(U(base) & U(~mask)) | U(U(U(insert) << offset) & mask));
}
// mulhi returns the high half of the full product x * y.
template <class I, MTL_IF_INT(I)>
constexpr I mulhi(I x, I y) {
  typedef typename mtl_detail::wide<I>::type W;
  return I(W(W(x) * W(y)) >> mtl_detail::bit_width<I>());
}
// hadd returns (x + y) >> 1 and rhadd (x + y + 1) >> 1, without overflow.
template <class I, MTL_IF_INT(I)>
constexpr I hadd(I x, I y) {
  return I((x >> 1) + (y >> 1) + (x & y & 1));
}
template <class I, MTL_IF_INT(I)>
constexpr I rhadd(I x, I y) {
  return I((x >> 1) + (y >> 1) + ((x | y) & 1));
}
template <class I, MTL_IF_INT(I)>
MTL_FN constexpr I add_sat(I x, I y) {
  I r;
  if (__builtin_add_overflow(x, y, &r)) return y > 0 ? std::numeric_limits<I>::max() : std::numeric_limits<I>::min();
  return r;
}
template <class I, MTL_IF_INT(I)>
MTL_FN constexpr I sub_sat(I x, I y) {
  I r;
  if (__builtin_sub_overflow(x, y, &r)) {
    if (std::is_signed<I>::value) return y < 0 ? std::numeric_limits<I>::max() : std::numeric_limits<I>::min();
    return I(0);
  }
  return r;
}

// absdiff, addsat and subsat are Metal's spellings of abs_diff, add_sat
// and sub_sat (the OpenCL spellings, which the prelude also accepts).
template <class I, MTL_IF_INT(I)>
constexpr mtl_detail::uint_of<I> absdiff(I x, I y) {
  return abs_diff(x, y);
}
template <class I, MTL_IF_INT(I)>
constexpr I addsat(I x, I y) {
  return add_sat(x, y);
}
template <class I, MTL_IF_INT(I)>
constexpr I subsat(I x, I y) {
  return sub_sat(x, y);
}
// madhi returns mulhi(a, b) + c, wrapping.
template <class I, MTL_IF_INT(I)>
constexpr I madhi(I a, I b, I c) {
  typedef mtl_detail::uint_of<I> U;
  return I(U(U(mulhi(a, b)) + U(c)));
}
// madsat returns a * b + c saturated to the range of I.
template <class I, MTL_IF_INT(I)>
constexpr I madsat(I a, I b, I c) {
  // The exact a * b + c fits in the 128-bit type even for 64-bit I:
  // |a * b| <= 2^126 signed, and (2^64 - 1)^2 + 2^64 - 1 < 2^128 unsigned.
  typedef typename mtl_detail::wide<I>::type W;
  W lo = W(std::numeric_limits<I>::min()), hi = W(std::numeric_limits<I>::max());
  W r = W(a) * W(b) + W(c);
  return I(r > hi ? hi : r < lo ? lo : r);
}
// mul24 and mad24 multiply (and add) 32-bit integers whose values fit in
// 24 bits (signed or unsigned by type); outside that range the result is
// undefined in Metal, and here it is the wrapped 32-bit product.
template <class I, MTL_IF_INT32(I)>
constexpr I mul24(I x, I y) {
  return I(uint(x) * uint(y));
}
template <class I, MTL_IF_INT32(I)>
constexpr I mad24(I x, I y, I z) {
  return I(uint(x) * uint(y) + uint(z));
}

// Vector versions of the integer-only functions (abs, min, max and clamp
// for vectors are with the float ones in metal_math.h).
#define MTL_IVEC1(name)                                                 \
  template <class I, int N, bool P, MTL_IF_INT(I)>                      \
  constexpr vec<I, N> name(const basic_vec<I, N, P>& x) {               \
    vec<I, N> r{};                                                      \
    for (int i = 0; i < N; i++) r[i] = name(I(x[i]));                   \
    return r;                                                           \
  }
#define MTL_IVEC2(name)                                                                    \
  template <class I, int N, bool P1, bool P2, MTL_IF_INT(I)>                               \
  constexpr vec<I, N> name(const basic_vec<I, N, P1>& x, const basic_vec<I, N, P2>& y) {   \
    vec<I, N> r{};                                                                         \
    for (int i = 0; i < N; i++) r[i] = name(I(x[i]), I(y[i]));                             \
    return r;                                                                              \
  }
MTL_IVEC1(popcount)
MTL_IVEC1(clz)
MTL_IVEC1(ctz)
MTL_IVEC1(reverse_bits)
MTL_IVEC2(rotate)
MTL_IVEC2(mulhi)
MTL_IVEC2(hadd)
MTL_IVEC2(rhadd)
MTL_IVEC2(add_sat)
MTL_IVEC2(sub_sat)
#define MTL_IVEC3(name)                                                                                       \
  template <class I, int N, bool P1, bool P2, bool P3, MTL_IF_INT(I)>                                       \
  constexpr vec<I, N> name(const basic_vec<I, N, P1>& x, const basic_vec<I, N, P2>& y, const basic_vec<I, N, P3>& z) { \
    vec<I, N> r{};                                                                                          \
    for (int i = 0; i < N; i++) r[i] = name(I(x[i]), I(y[i]), I(z[i]));                                    \
    return r;                                                                                               \
  }
MTL_IVEC2(addsat)
MTL_IVEC2(subsat)
MTL_IVEC2(mul24)
MTL_IVEC3(madhi)
MTL_IVEC3(madsat)
MTL_IVEC3(mad24)
#undef MTL_IVEC1
#undef MTL_IVEC2
#undef MTL_IVEC3
template <class I, int N, bool P1, bool P2, MTL_IF_INT(I)>
constexpr vec<mtl_detail::uint_of<I>, N> abs_diff(const basic_vec<I, N, P1>& x, const basic_vec<I, N, P2>& y) {
  vec<mtl_detail::uint_of<I>, N> r{};
  for (int i = 0; i < N; i++) r[i] = abs_diff(I(x[i]), I(y[i]));
  return r;
}
template <class I, int N, bool P1, bool P2, MTL_IF_INT(I)>
constexpr vec<mtl_detail::uint_of<I>, N> absdiff(const basic_vec<I, N, P1>& x, const basic_vec<I, N, P2>& y) {
  return abs_diff(x, y);
}
template <class I, int N, bool P, MTL_IF_INT(I)>
constexpr vec<I, N> extract_bits(const basic_vec<I, N, P>& x, uint offset, uint bits) {
  vec<I, N> r{};
  for (int i = 0; i < N; i++) r[i] = extract_bits(I(x[i]), offset, bits);
  return r;
}
template <class I, int N, bool P1, bool P2, MTL_IF_INT(I)>
constexpr vec<I, N> insert_bits(const basic_vec<I, N, P1>& base, const basic_vec<I, N, P2>& ins, uint offset, uint bits) {
  vec<I, N> r{};
  for (int i = 0; i < N; i++) r[i] = insert_bits(I(base[i]), I(ins[i]), offset, bits);
  return r;
}

#undef MTL_IF_INT

}  // namespace metal
