// metal_constants.h — Metal's numeric constant macros: the integer limits
// (CHAR_BIT, INT_MAX, UINT_MAX, ...: <climits>, the same values), float
// (FLT_MAX, ...: <cfloat>), half (HALF_MAX, ...) and the math constants
// M_*_F and M_*_H.
#pragma once
#include <cfloat>
#include <climits>

#include "metal_scalar.h"

// INFINITY, NAN and HUGE_VALF are spelled exactly as glibc's <math.h>
// spells them, so including it later does not redefine them differently.
#ifndef INFINITY
#define INFINITY (__builtin_inff ())
#endif
#ifndef NAN
#define NAN (__builtin_nanf (""))
#endif
#ifndef HUGE_VALF
#define HUGE_VALF (__builtin_huge_valf ())
#endif
#ifndef MAXFLOAT
#define MAXFLOAT 0x1.fffffep+127f
#endif
#define HUGE_VALH (metal::half::from_bits(0x7c00))
#define MAXHALF (metal::half::from_bits(0x7bff))
#define HALF_MAX (metal::half::from_bits(0x7bff))
#define HALF_MIN (metal::half::from_bits(0x0400))
#define HALF_EPSILON (metal::half::from_bits(0x1400))
#define HALF_DIG 3
#define HALF_MANT_DIG 11
#define HALF_MAX_EXP 16
#define HALF_MIN_EXP (-13)
#define HALF_MAX_10_EXP 4
#define HALF_MIN_10_EXP (-4)

#define M_E_F 2.71828182845904523536028747135266250f
#define M_LOG2E_F 1.44269504088896340735992468100189214f
#define M_LOG10E_F 0.434294481903251827651128918916605082f
#define M_LN2_F 0.693147180559945309417232121458176568f
#define M_LN10_F 2.30258509299404568401799145468436421f
#define M_PI_F 3.14159265358979323846264338327950288f
#define M_PI_2_F 1.57079632679489661923132169163975144f
#define M_PI_4_F 0.785398163397448309615660845819875721f
#define M_1_PI_F 0.318309886183790671537767526745028724f
#define M_2_PI_F 0.636619772367581343075535053490057448f
#define M_2_SQRTPI_F 1.12837916709551257389615890312154517f
#define M_SQRT2_F 1.41421356237309504880168872420969808f
#define M_SQRT1_2_F 0.707106781186547524400844362104849039f

#define M_E_H (metal::half(2.71828182845904523536028747135266250))
#define M_LOG2E_H (metal::half(1.44269504088896340735992468100189214))
#define M_LOG10E_H (metal::half(0.434294481903251827651128918916605082))
#define M_LN2_H (metal::half(0.693147180559945309417232121458176568))
#define M_LN10_H (metal::half(2.30258509299404568401799145468436421))
#define M_PI_H (metal::half(3.14159265358979323846264338327950288))
#define M_PI_2_H (metal::half(1.57079632679489661923132169163975144))
#define M_PI_4_H (metal::half(0.785398163397448309615660845819875721))
#define M_1_PI_H (metal::half(0.318309886183790671537767526745028724))
#define M_2_PI_H (metal::half(0.636619772367581343075535053490057448))
#define M_2_SQRTPI_H (metal::half(1.12837916709551257389615890312154517))
#define M_SQRT2_H (metal::half(1.41421356237309504880168872420969808))
#define M_SQRT1_2_H (metal::half(0.707106781186547524400844362104849039))
