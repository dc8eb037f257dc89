// metal_precise.h — metal::precise and metal::fast: the same functions as
// metal:: (the cpu backend never trades accuracy for speed).
#pragma once
#include "metal_math.h"

namespace metal {

#define MTL_MATH_NAMES                                                                                         \
  using metal::exp; using metal::exp2; using metal::exp10; using metal::log; using metal::log2;               \
  using metal::log10; using metal::sqrt; using metal::rsqrt; using metal::fabs; using metal::abs;             \
  using metal::floor; using metal::ceil; using metal::round; using metal::rint; using metal::trunc;           \
  using metal::fract; using metal::sin; using metal::cos; using metal::tan; using metal::asin;                \
  using metal::acos; using metal::atan; using metal::sinh; using metal::cosh; using metal::tanh;              \
  using metal::asinh; using metal::acosh; using metal::atanh; using metal::sinpi; using metal::cospi;         \
  using metal::tanpi; using metal::sign; using metal::saturate; using metal::pow; using metal::powr;          \
  using metal::fmod; using metal::atan2; using metal::fmin; using metal::fmax; using metal::fdim;             \
  using metal::copysign; using metal::nextafter; using metal::divide; using metal::step; using metal::fma;    \
  using metal::mad; using metal::mix; using metal::smoothstep; using metal::isnan; using metal::isinf;        \
  using metal::isfinite; using metal::isnormal; using metal::signbit; using metal::min; using metal::max;     \
  using metal::clamp; using metal::pown; using metal::ldexp; using metal::frexp; using metal::modf;           \
  using metal::dot; using metal::cross; using metal::length; using metal::length_squared;                     \
  using metal::distance; using metal::distance_squared; using metal::normalize; using metal::reflect;         \
  using metal::faceforward; using metal::sincos; using metal::refract; \
  using metal::fmin3; using metal::fmax3; using metal::fmedian3; using metal::ilogb; using metal::logb;   \
  using metal::isordered; using metal::isunordered;

namespace precise {
MTL_MATH_NAMES
}  // namespace precise
namespace fast {
MTL_MATH_NAMES
}  // namespace fast

}  // namespace metal
