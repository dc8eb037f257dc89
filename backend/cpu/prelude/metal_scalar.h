// metal_scalar.h — Metal scalar types for the cpu backend: the integer
// typedefs, IEEE binary16 `half` and `bfloat` with per-operation rounding,
// type traits shared by the other pieces and as_type.
//
// half and bfloat hold their bit pattern. Every arithmetic operation on them
// is computed in float and rounded back to the 16-bit format (round to
// nearest, ties to even). float has more than twice the precision plus two
// bits of either format, so that is the correctly rounded result for + - * /
// and sqrt, the same as hardware binary16 arithmetic.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "mtl_rt.h"

// MTL_FN marks the functions the cuda backend also compiles for the GPU
// that its execution-space layer does not reach (see the cuda backend's
// runtime/mtl_rt.h, which defines it): functions defined in a class body
// and constexpr functions that are not constant expressions in C++17.
// Here, for the cpu backend, it is empty.
#ifndef MTL_FN
#define MTL_FN
#endif

namespace metal {

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
using std::size_t;
using std::ptrdiff_t;

namespace mtl_detail {

// id makes a function parameter a non-deduced context, so an argument of
// another scalar type converts to the type deduced elsewhere.
template <class T>
struct id { typedef T type; };

// bits_of returns the bit pattern of a float or double, usable in constexpr.
constexpr uint32_t bits_of(float f) { return __builtin_bit_cast(uint32_t, f); }
constexpr uint64_t bits_of(double d) { return __builtin_bit_cast(uint64_t, d); }
constexpr float float_of(uint32_t b) { return __builtin_bit_cast(float, b); }

#if defined(__F16C__) && !defined(__CUDA_ARCH__)
// With F16C (the backend compiling with -mf16c or an -march that has it),
// conversions use the hardware instructions, which round to nearest even
// (immediate 0) and treat subnormals, infinities and NaNs as the software
// path below does.
typedef float f16c_v4sf __attribute__((vector_size(16)));
typedef short f16c_v8hi __attribute__((vector_size(16)));
inline uint16_t f16c_from_float(float f) {
  f16c_v4sf v = {f, 0.0f, 0.0f, 0.0f};
  return uint16_t(__builtin_ia32_vcvtps2ph(v, 0)[0]);
}
inline float f16c_to_float(uint16_t h) {
  f16c_v8hi v = {short(h), 0, 0, 0, 0, 0, 0, 0};
  return __builtin_ia32_vcvtph2ps(v)[0];
}
#endif

// round_shift returns v >> s rounded to nearest, ties to even.
constexpr uint64_t round_shift(uint64_t v, int s) {
  uint64_t q = v >> s;
  uint64_t rem = v & ((uint64_t(1) << s) - 1);
  uint64_t halfway = uint64_t(1) << (s - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) q++;
  return q;
}

// half_bits_from_double converts d to binary16 bits, rounding to nearest
// even; overflow gives infinity, tiny values subnormals or signed zero, and
// NaN stays NaN (quieted, keeping the top payload bits).
constexpr uint16_t half_bits_from_double(double d) {
  uint64_t x = bits_of(d);
  uint16_t sign = uint16_t((x >> 48) & 0x8000);
  uint64_t ax = x & 0x7fffffffffffffffull;
  if (ax >= 0x7ff0000000000000ull) {
    if (ax > 0x7ff0000000000000ull) return uint16_t(sign | 0x7e00 | ((ax >> 42) & 0x3ff));
    return uint16_t(sign | 0x7c00);
  }
  if (ax >= 0x40effe0000000000ull) return uint16_t(sign | 0x7c00);  // >= 65520
  if (ax >= 0x3f10000000000000ull) {                                // >= 2^-14: normal
    uint64_t r = ax - (uint64_t(1023 - 15) << 52);
    return uint16_t(sign | round_shift(r, 42));
  }
  if (ax < 0x3e60000000000000ull) return sign;  // < 2^-25 rounds to zero
  int e = int(ax >> 52);
  uint64_t m = (ax & 0xfffffffffffffull) | (uint64_t(1) << 52);
  return uint16_t(sign | round_shift(m, 1051 - e));
}

// half_bits_from_float is half_bits_from_double for float input (exact
// widening, so one rounding). Normal results round with an integer bias;
// subnormal results let a float addition (round to nearest even under
// -fno-fast-math) align the bits, which keeps the common path branch-light.
constexpr uint16_t half_bits_from_float(float f) {
#if defined(__F16C__) && !defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return f16c_from_float(f);
#endif
  uint32_t x = bits_of(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x47800000u) {  // >= 65536, inf or NaN
    if (x > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
    return uint16_t(sign | 0x7c00u);
  }
  if (x < 0x38800000u) {  // below 2^-14: subnormal or zero
    uint32_t r = bits_of(float_of(x) + 0.5f) - 0x3f000000u;
    return uint16_t(sign | r);
  }
  uint32_t odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;  // rebias the exponent by -112 (mod 2^32) and round
  return uint16_t(sign | (x >> 13));
}

// float_from_half_bits widens binary16 bits to float exactly.
constexpr float float_from_half_bits(uint16_t h) {
#if defined(__F16C__) && !defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return f16c_to_float(h);
#endif
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t e = (h >> 10) & 0x1f;
  uint32_t m = h & 0x3ff;
  if (e == 0x1f) return float_of(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    float v = float(m) * 0x1p-24f;
    return sign ? -v : v;
  }
  return float_of(sign | ((e + 112) << 23) | (m << 13));
}

// bfloat_bits_from_float rounds f to bfloat16 bits, nearest even; NaN stays
// NaN (quieted).
constexpr uint16_t bfloat_bits_from_float(float f) {
  uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

// float_round_to_odd narrows d to float rounding to odd (truncate, then set
// the last bit if inexact), so a second rounding to a narrower format is
// correct.
constexpr float float_round_to_odd(double d) {
  float f = float(d);
  if (d != d) return f;
  double af = f < 0 ? -double(f) : double(f);
  double ad = d < 0 ? -d : d;
  if (af == ad) return f;
  uint32_t b = bits_of(f);
  if (af > ad) b -= 1;  // rounded away from zero: step back toward zero
  return float_of(b | 1);
}

}  // namespace mtl_detail

// half is IEEE binary16. Conversions from float and double round once to
// nearest even; arithmetic between halves (or a half and an integer) is done
// in float and rounded after each operation; mixing a half with a float
// yields float, as in Metal.
struct half {
  uint16_t bits;

  half() = default;
  constexpr half(float f) : bits(mtl_detail::half_bits_from_float(f)) {}
  constexpr half(double d) : bits(mtl_detail::half_bits_from_double(d)) {}
  template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  constexpr half(T v) : bits(mtl_detail::half_bits_from_double(double(v))) {}

  // from_bits makes a half from its bit pattern.
  static constexpr half from_bits(uint16_t b) {
    half h{};
    h.bits = b;
    return h;
  }
  // A half converts implicitly to float only, and explicitly (int(h),
  // static_cast, if (h)) to the other arithmetic types. An implicit
  // conversion to int would make `c ? h : 0` ambiguous (0 converts to half
  // and h to int); this way it is a half, as in Metal.
  template <class T, typename std::enable_if<std::is_same<T, float>::value, int>::type = 0>
  constexpr operator T() const { return mtl_detail::float_from_half_bits(bits); }
  template <class T, typename std::enable_if<std::is_arithmetic<T>::value && !std::is_same<T, float>::value, long>::type = 0>
  constexpr explicit operator T() const { return T(mtl_detail::float_from_half_bits(bits)); }

  template <class T>
  MTL_FN half& operator+=(T v) { return *this = half(*this + v); }
  template <class T>
  MTL_FN half& operator-=(T v) { return *this = half(*this - v); }
  template <class T>
  MTL_FN half& operator*=(T v) { return *this = half(*this * v); }
  template <class T>
  MTL_FN half& operator/=(T v) { return *this = half(*this / v); }
  MTL_FN half& operator++() { return *this = half(float(*this) + 1.0f); }
  MTL_FN half& operator--() { return *this = half(float(*this) - 1.0f); }
  MTL_FN half operator++(int) { half t = *this; ++*this; return t; }
  MTL_FN half operator--(int) { half t = *this; --*this; return t; }
};

// bfloat is bfloat16 (8-bit significand), with the same rounding rules as
// half.
struct bfloat {
  uint16_t bits;

  bfloat() = default;
  constexpr bfloat(float f) : bits(mtl_detail::bfloat_bits_from_float(f)) {}
  constexpr bfloat(double d) : bits(mtl_detail::bfloat_bits_from_float(mtl_detail::float_round_to_odd(d))) {}
  template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  constexpr bfloat(T v) : bfloat(double(v)) {}
  constexpr explicit bfloat(half h) : bfloat(float(h)) {}

  // from_bits makes a bfloat from its bit pattern.
  static constexpr bfloat from_bits(uint16_t b) {
    bfloat h{};
    h.bits = b;
    return h;
  }
  // Conversions as for half: implicit to float only, so `c ? b : 0` is a
  // bfloat.
  template <class T, typename std::enable_if<std::is_same<T, float>::value, int>::type = 0>
  constexpr operator T() const { return mtl_detail::float_of(uint32_t(bits) << 16); }
  template <class T, typename std::enable_if<std::is_arithmetic<T>::value && !std::is_same<T, float>::value, long>::type = 0>
  constexpr explicit operator T() const { return T(mtl_detail::float_of(uint32_t(bits) << 16)); }

  template <class T>
  MTL_FN bfloat& operator+=(T v) { return *this = bfloat(*this + v); }
  template <class T>
  MTL_FN bfloat& operator-=(T v) { return *this = bfloat(*this - v); }
  template <class T>
  MTL_FN bfloat& operator*=(T v) { return *this = bfloat(*this * v); }
  template <class T>
  MTL_FN bfloat& operator/=(T v) { return *this = bfloat(*this / v); }
  MTL_FN bfloat& operator++() { return *this = bfloat(float(*this) + 1.0f); }
  MTL_FN bfloat& operator--() { return *this = bfloat(float(*this) - 1.0f); }
  MTL_FN bfloat operator++(int) { bfloat t = *this; ++*this; return t; }
  MTL_FN bfloat operator--(int) { bfloat t = *this; --*this; return t; }
};

static_assert(sizeof(half) == 2 && alignof(half) == 2, "half layout");
static_assert(sizeof(bfloat) == 2 && alignof(bfloat) == 2, "bfloat layout");
static_assert(std::is_trivial<half>::value && std::is_trivial<bfloat>::value, "16-bit floats must be trivial");

namespace mtl_detail {

// is_f16 is true for the two 16-bit float types.
template <class T>
struct is_f16 : std::integral_constant<bool, std::is_same<T, half>::value || std::is_same<T, bfloat>::value> {};

// f16_result picks the 16-bit type of an operation between A and B when it
// stays 16-bit: both the same 16-bit type, or one 16-bit and one integer.
template <class A, class B, class = void>
struct f16_result {};
template <class A>
struct f16_result<A, A, typename std::enable_if<is_f16<A>::value>::type> { typedef A type; };
template <class A, class B>
struct f16_result<A, B, typename std::enable_if<is_f16<A>::value && std::is_integral<B>::value>::type> { typedef A type; };
template <class A, class B>
struct f16_result<B, A, typename std::enable_if<is_f16<A>::value && std::is_integral<B>::value>::type> { typedef A type; };

// wide_result picks the type of an operation between a 16-bit float and a
// float (or double): the wider type, as in Metal.
template <class A, class B, class = void>
struct wide_result {};
template <class A, class B>
struct wide_result<A, B, typename std::enable_if<is_f16<A>::value && std::is_floating_point<B>::value>::type> { typedef B type; };
template <class A, class B>
struct wide_result<B, A, typename std::enable_if<is_f16<A>::value && std::is_floating_point<B>::value>::type> { typedef B type; };

// is_scalar is true for every Metal scalar type.
template <class T>
struct is_scalar : std::integral_constant<bool, std::is_arithmetic<T>::value || is_f16<T>::value> {};

// is_floating is true for float, double and the 16-bit floats.
template <class T>
struct is_floating : std::integral_constant<bool, std::is_floating_point<T>::value || is_f16<T>::value> {};

}  // namespace mtl_detail

// 16-bit float arithmetic: an integer operand converts to the 16-bit type
// first (as in C++'s usual arithmetic conversions), then the operation is
// computed in float and rounded once.
#define MTL_F16_BINOP(op)                                                        \
  template <class A, class B, class R = typename mtl_detail::f16_result<A, B>::type> \
  constexpr R operator op(A a, B b) {                                            \
    return R(float(R(a)) op float(R(b)));                                        \
  }
MTL_F16_BINOP(+)
MTL_F16_BINOP(-)
MTL_F16_BINOP(*)
MTL_F16_BINOP(/)
#undef MTL_F16_BINOP

#define MTL_F16_CMP(op)                                                          \
  template <class A, class B, class R = typename mtl_detail::f16_result<A, B>::type> \
  constexpr bool operator op(A a, B b) {                                         \
    return float(R(a)) op float(R(b));                                           \
  }
MTL_F16_CMP(==)
MTL_F16_CMP(!=)
MTL_F16_CMP(<)
MTL_F16_CMP(<=)
MTL_F16_CMP(>)
MTL_F16_CMP(>=)
#undef MTL_F16_CMP

#define MTL_COMMA ,
// Mixed 16-bit and float arithmetic is float arithmetic. These are spelled
// out because a half converts implicitly to float only through a template,
// which the built-in operator candidates do not consider.
#define MTL_WIDE_BINOP(op, Ret)                                                      \
  template <class A, class B, typename mtl_detail::wide_result<A, B>::type* = nullptr> \
  constexpr Ret operator op(A a, B b) {                                              \
    typedef typename mtl_detail::wide_result<A, B>::type R;                          \
    return R(a) op R(b);                                                             \
  }
MTL_WIDE_BINOP(+, typename mtl_detail::wide_result<A MTL_COMMA B>::type)
MTL_WIDE_BINOP(-, typename mtl_detail::wide_result<A MTL_COMMA B>::type)
MTL_WIDE_BINOP(*, typename mtl_detail::wide_result<A MTL_COMMA B>::type)
MTL_WIDE_BINOP(/, typename mtl_detail::wide_result<A MTL_COMMA B>::type)
MTL_WIDE_BINOP(==, bool)
MTL_WIDE_BINOP(!=, bool)
MTL_WIDE_BINOP(<, bool)
MTL_WIDE_BINOP(<=, bool)
MTL_WIDE_BINOP(>, bool)
MTL_WIDE_BINOP(>=, bool)
#undef MTL_WIDE_BINOP
#undef MTL_COMMA

// Compound assignment of a 16-bit float to a built-in arithmetic variable
// (`f += h`, `i *= h`): the operation as written, converted back.
#define MTL_F16_RHS_ASSIGN(op)                                                              \
  template <class A, class B,                                                              \
            typename std::enable_if<std::is_arithmetic<A>::value && mtl_detail::is_f16<B>::value, int>::type = 0> \
  inline A& operator op##=(A& a, B b) {                                                    \
    return a = A(a op b);                                                                  \
  }
MTL_F16_RHS_ASSIGN(+)
MTL_F16_RHS_ASSIGN(-)
MTL_F16_RHS_ASSIGN(*)
MTL_F16_RHS_ASSIGN(/)
#undef MTL_F16_RHS_ASSIGN

constexpr half operator-(half h) { return half::from_bits(uint16_t(h.bits ^ 0x8000)); }
constexpr half operator+(half h) { return h; }
constexpr bfloat operator-(bfloat h) { return bfloat::from_bits(uint16_t(h.bits ^ 0x8000)); }
constexpr bfloat operator+(bfloat h) { return h; }

// as_type reinterprets the bits of x as T; the sizes must match.
template <class T, class U>
inline T as_type(const U& x) {
  static_assert(sizeof(T) == sizeof(U), "as_type: source and destination sizes differ");
  T r;
  __builtin_memcpy(&r, &x, sizeof(T));
  return r;
}

}  // namespace metal
