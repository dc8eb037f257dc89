// metal_limits.h — <metal_limits>: metal::numeric_limits<T> for every
// Metal scalar type. The integer, bool and float limits are the host's
// (the same values: Metal's integer types have the host's sizes under the
// backend's flags, and float is IEEE binary32); half and bfloat get full
// specialisations of std::numeric_limits here.
#pragma once
#include <limits>

#include "metal_scalar.h"

namespace metal {

// numeric_limits is a class template of its own, so a kernel may
// specialise metal::numeric_limits for its own types (MLX does for its
// complex type); it inherits every member of std::numeric_limits<T>.
template <class T>
struct _numeric_limits_impl : std::numeric_limits<T> {};
// As in Metal's headers, numeric_limits<T> is _numeric_limits_impl<T>, which
// a kernel may specialise instead (candle's reduce.metal does for its
// indexed<T>).
template <class T>
struct numeric_limits : _numeric_limits_impl<T> {};

}  // namespace metal

namespace std {
template <>
struct numeric_limits<metal::half> {
  typedef metal::half T;
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr float_denorm_style has_denorm = denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr float_round_style round_style = round_to_nearest;
  static constexpr bool is_iec559 = true;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -13;
  static constexpr int min_exponent10 = -4;
  static constexpr int max_exponent = 16;
  static constexpr int max_exponent10 = 4;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;
  static constexpr T min() noexcept { return T::from_bits(0x0400); }
  static constexpr T lowest() noexcept { return T::from_bits(0xfbff); }
  static constexpr T max() noexcept { return T::from_bits(0x7bff); }
  static constexpr T epsilon() noexcept { return T::from_bits(0x1400); }
  static constexpr T round_error() noexcept { return T::from_bits(0x3800); }
  static constexpr T infinity() noexcept { return T::from_bits(0x7c00); }
  static constexpr T quiet_NaN() noexcept { return T::from_bits(0x7e00); }
  static constexpr T signaling_NaN() noexcept { return T::from_bits(0x7d00); }
  static constexpr T denorm_min() noexcept { return T::from_bits(0x0001); }
};
template <>
struct numeric_limits<metal::bfloat> {
  typedef metal::bfloat T;
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr float_denorm_style has_denorm = denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr float_round_style round_style = round_to_nearest;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125;
  static constexpr int min_exponent10 = -37;
  static constexpr int max_exponent = 128;
  static constexpr int max_exponent10 = 38;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;
  static constexpr T min() noexcept { return T::from_bits(0x0080); }
  static constexpr T lowest() noexcept { return T::from_bits(0xff7f); }
  static constexpr T max() noexcept { return T::from_bits(0x7f7f); }
  static constexpr T epsilon() noexcept { return T::from_bits(0x3c00); }
  static constexpr T round_error() noexcept { return T::from_bits(0x3f00); }
  static constexpr T infinity() noexcept { return T::from_bits(0x7f80); }
  static constexpr T quiet_NaN() noexcept { return T::from_bits(0x7fc0); }
  static constexpr T signaling_NaN() noexcept { return T::from_bits(0x7fa0); }
  static constexpr T denorm_min() noexcept { return T::from_bits(0x0001); }
};
}  // namespace std
