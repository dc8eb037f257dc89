// metal_math.h — Metal's math, common, geometric and relational functions
// for float, half and bfloat scalars and vectors, in metal:: and again in
// metal::precise:: and metal::fast:: (the same functions: the cpu backend
// never trades accuracy for speed).
//
// Results are the host libm's (through the compiler builtins, so no C math
// header enters the global namespace); they may differ from Apple's GPU in
// the last bits. Parity is always checked between a baseline and its
// variants on the same backend, so that is fine. 16-bit arguments are
// computed in float and rounded once.
#pragma once
#include "metal_scalar.h"
#include "metal_vector.h"
#include "metal_integer.h"

namespace metal {

namespace mtl_detail {
// opaque returns x unchanged but hides its value from the optimiser, so a
// libm call on a constant is not folded at compile time (with correctly
// rounded arithmetic) while the same call on a run-time value goes to libm:
// a variant that makes an argument constant must get the same bits.
inline float opaque(float x) {
#if defined(__CUDA_ARCH__)
  asm("" : "+f"(x));
#elif defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(x));
#elif defined(__aarch64__)
  __asm__("" : "+w"(x));
#else
  volatile float v = x;
  x = v;
#endif
  return x;
}
inline double opaque(double x) {
#if defined(__CUDA_ARCH__)
  asm("" : "+d"(x));
#elif defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(x));
#elif defined(__aarch64__)
  __asm__("" : "+w"(x));
#else
  volatile double v = x;
  x = v;
#endif
  return x;
}
// fmin_f and fmax_f are C's fmin and fmax (a NaN argument loses) with the
// sign of zero fixed: fmin(+0, -0) is -0 and fmax(+0, -0) is +0. Libm and
// the compiler's constant folder may disagree there, and a variant must not
// change bits because more of it became constant.
constexpr float fmin_f(float x, float y) {
  if (x != x) return y;
  if (y != y) return x;
  if (x == y) return __builtin_signbit(x) ? x : y;
  return x < y ? x : y;
}
constexpr float fmax_f(float x, float y) {
  if (x != x) return y;
  if (y != y) return x;
  if (x == y) return __builtin_signbit(x) ? y : x;
  return x > y ? x : y;
}
inline float smoothstep_f(float e0, float e1, float x) {
  float t = mtl_detail::fmin_f(mtl_detail::fmax_f((x - e0) / (e1 - e0), 0.0f), 1.0f);
  return t * t * (3.0f - 2.0f * t);
}
// sinpi_f, cospi_f and tanpi_f reduce the argument exactly (fmod is
// exact), give exact results at integers and half-integers, and otherwise
// compute in double and round once.
constexpr double kPi = 3.14159265358979323846;
inline float sinpi_f(float x) {
  if (!__builtin_isfinite(x)) return x - x;
  float r = __builtin_fmodf(x, 2.0f);
  if (r == __builtin_truncf(r)) return __builtin_copysignf(0.0f, x);
  float a = __builtin_fabsf(r);
  if (a == 0.5f || a == 1.5f) return (a == 0.5f) == (r > 0.0f) ? 1.0f : -1.0f;
  return float(__builtin_sin(mtl_detail::opaque(double(r) * kPi)));
}
inline float cospi_f(float x) {
  if (!__builtin_isfinite(x)) return x - x;
  float a = __builtin_fmodf(__builtin_fabsf(x), 2.0f);
  if (a == 0.5f || a == 1.5f) return 0.0f;
  if (a == 0.0f) return 1.0f;
  if (a == 1.0f) return -1.0f;
  return float(__builtin_cos(mtl_detail::opaque(double(a) * kPi)));
}
inline float tanpi_f(float x) {
  if (!__builtin_isfinite(x)) return x - x;
  float r = __builtin_fmodf(x, 1.0f);
  if (r == 0.0f) return __builtin_copysignf(0.0f, x);
  if (__builtin_fabsf(r) == 0.5f) return __builtin_copysignf(__builtin_inff(), r);
  return float(__builtin_tan(mtl_detail::opaque(double(r) * kPi)));
}
// fract_f is fmin(x - floor(x), 0x1.fffffep-1f), with NaN kept and
// infinities giving a signed zero.
inline float fract_f(float x) {
  if (__builtin_isinf(x)) return __builtin_copysignf(0.0f, x);
  if (x != x) return x;
  return mtl_detail::fmin_f(x - __builtin_floorf(x), 0x1.fffffep-1f);
}

// vec_of is the plain vector type of a vector argument (a vec, a packed
// vector or a swizzle proxy).
template <class A>
struct vec_of {
  typedef vec<typename A::mtl_vec_element, A::mtl_vec_size> type;
};

// first_vec is vec_of the first vector among A...; it has no type when
// none is a vector.
template <class... A>
struct first_vec {};
template <class A, class... R>
struct first_vec<A, R...> : std::conditional<is_vec<A>::value, vec_of<A>, first_vec<R...>>::type {};

// fits says whether argument A may take part in an operation on vec<T, N>:
// a vector of T with N components, or a scalar (which converts to T and is
// used for every component).
template <class T, int N, class A, class = void>
struct fits : std::integral_constant<bool, is_scalar<A>::value> {};
template <class T, int N, class A>
struct fits<T, N, A, typename std::enable_if<is_vec<A>::value>::type>
    : std::integral_constant<bool, std::is_same<typename A::mtl_vec_element, T>::value && A::mtl_vec_size == N> {};

template <class V, class... A>
struct all_fit
    : std::integral_constant<bool, (fits<typename V::mtl_vec_element, V::mtl_vec_size, A>::value && ...)> {};

// mixed_vec_t is the result type of an elementwise function of arguments
// A... of which at least one is a vector: vec<T, N> when every vector is
// one of T with N components and every other argument is a scalar. As in
// Metal, a scalar argument stands for a vector with every component equal
// to it (fmax(v, 0.0f), step(0.5f, v), smoothstep(0.0f, 1.0f, v),
// clamp(v, lo, hi) with scalar bounds).
template <class... A>
using mixed_vec_t = typename std::enable_if<all_fit<typename first_vec<A...>::type, A...>::value,
                                            typename first_vec<A...>::type>::type;

// at is component i of a vector argument as a T, or a scalar argument as a
// T.
template <class T, class A>
constexpr T at(const A& a, int i) {
  if constexpr (is_vec<A>::value) {
    return T(a[i]);
  } else {
    (void)i;
    return T(a);
  }
}
}  // namespace mtl_detail

#define MTL_IF_F16(H) typename std::enable_if<mtl_detail::is_f16<H>::value, int>::type = 0

// MTL_VEC2 and MTL_VEC3 define the vector forms of an elementwise function
// of two or three arguments: any mix of vectors of one type and size and
// scalars, at least one a vector (see mtl_detail::mixed_vec_t). Each
// component is the scalar function of the components.
#define MTL_VEC2(name)                                                                     \
  template <class A, class B, class V = mtl_detail::mixed_vec_t<A, B>>                    \
  inline V name(const A& a, const B& b) {                                                  \
    typedef typename V::mtl_vec_element T;                                                 \
    V r{};                                                                                 \
    for (int i = 0; i < V::mtl_vec_size; i++)                                              \
      r[i] = T(name(mtl_detail::at<T>(a, i), mtl_detail::at<T>(b, i)));                    \
    return r;                                                                              \
  }
#define MTL_VEC3(name)                                                                                 \
  template <class A, class B, class C, class V = mtl_detail::mixed_vec_t<A, B, C>>                     \
  inline V name(const A& a, const B& b, const C& c) {                                                  \
    typedef typename V::mtl_vec_element T;                                                             \
    V r{};                                                                                             \
    for (int i = 0; i < V::mtl_vec_size; i++)                                                          \
      r[i] = T(name(mtl_detail::at<T>(a, i), mtl_detail::at<T>(b, i), mtl_detail::at<T>(c, i)));      \
    return r;                                                                                          \
  }

// MTL_MATH1 defines name for float, the 16-bit floats and vectors of them;
// fexpr computes the float result from float x.
#define MTL_MATH1(name, fexpr)                                    \
  inline float name(float x) { return fexpr; }                    \
  template <class H, MTL_IF_F16(H)>                               \
  inline H name(H h) {                                            \
    float x = float(h);                                           \
    return H(fexpr);                                              \
  }                                                               \
  template <class T, int N, bool P>                               \
  inline vec<T, N> name(const basic_vec<T, N, P>& v) {            \
    vec<T, N> r{};                                                \
    for (int i = 0; i < N; i++) r[i] = T(name(v[i]));             \
    return r;                                                     \
  }

// MTL_MATH2 is MTL_MATH1 for two arguments x and y; a vector also combines
// with a scalar, on either side.
#define MTL_MATH2(name, fexpr)                                                        \
  inline float name(float x, float y) { return fexpr; }                               \
  template <class H, MTL_IF_F16(H)>                                                   \
  inline H name(H hx, H hy) {                                                         \
    float x = float(hx), y = float(hy);                                               \
    return H(fexpr);                                                                  \
  }                                                                                   \
  MTL_VEC2(name)

// MTL_MATH3 is MTL_MATH2 for three arguments x, y and z; any of them may
// be a scalar when another is a vector.
#define MTL_MATH3(name, fexpr)                                                                                 \
  inline float name(float x, float y, float z) { return fexpr; }                                               \
  template <class H, MTL_IF_F16(H)>                                                                            \
  inline H name(H hx, H hy, H hz) {                                                                            \
    float x = float(hx), y = float(hy), z = float(hz);                                                         \
    return H(fexpr);                                                                                           \
  }                                                                                                            \
  MTL_VEC3(name)

// MTL_PRED defines a classification function returning bool (bool vectors
// for vectors).
#define MTL_PRED(name, fexpr)                                    \
  inline bool name(float x) { return fexpr; }                    \
  template <class H, MTL_IF_F16(H)>                              \
  inline bool name(H h) {                                        \
    float x = float(h);                                          \
    return fexpr;                                                \
  }                                                              \
  template <class T, int N, bool P>                              \
  inline vec<bool, N> name(const basic_vec<T, N, P>& v) {        \
    vec<bool, N> r{};                                            \
    for (int i = 0; i < N; i++) r[i] = name(v[i]);               \
    return r;                                                    \
  }

MTL_MATH1(exp, __builtin_expf(mtl_detail::opaque(x)))
MTL_MATH1(exp2, __builtin_exp2f(mtl_detail::opaque(x)))
MTL_MATH1(exp10, __builtin_powf(mtl_detail::opaque(10.0f), x))
MTL_MATH1(log, __builtin_logf(mtl_detail::opaque(x)))
MTL_MATH1(log2, __builtin_log2f(mtl_detail::opaque(x)))
MTL_MATH1(log10, __builtin_log10f(mtl_detail::opaque(x)))
MTL_MATH1(sqrt, __builtin_sqrtf(x))
MTL_MATH1(rsqrt, 1.0f / __builtin_sqrtf(x))
MTL_MATH1(fabs, __builtin_fabsf(x))
MTL_MATH1(abs, __builtin_fabsf(x))
MTL_MATH1(floor, __builtin_floorf(x))
MTL_MATH1(ceil, __builtin_ceilf(x))
MTL_MATH1(round, __builtin_roundf(x))
MTL_MATH1(rint, __builtin_rintf(x))
MTL_MATH1(trunc, __builtin_truncf(x))
MTL_MATH1(fract, mtl_detail::fract_f(x))
MTL_MATH1(sin, __builtin_sinf(mtl_detail::opaque(x)))
MTL_MATH1(cos, __builtin_cosf(mtl_detail::opaque(x)))
MTL_MATH1(tan, __builtin_tanf(mtl_detail::opaque(x)))
MTL_MATH1(asin, __builtin_asinf(mtl_detail::opaque(x)))
MTL_MATH1(acos, __builtin_acosf(mtl_detail::opaque(x)))
MTL_MATH1(atan, __builtin_atanf(mtl_detail::opaque(x)))
MTL_MATH1(sinh, __builtin_sinhf(mtl_detail::opaque(x)))
MTL_MATH1(cosh, __builtin_coshf(mtl_detail::opaque(x)))
MTL_MATH1(tanh, __builtin_tanhf(mtl_detail::opaque(x)))
MTL_MATH1(asinh, __builtin_asinhf(mtl_detail::opaque(x)))
MTL_MATH1(acosh, __builtin_acoshf(mtl_detail::opaque(x)))
MTL_MATH1(atanh, __builtin_atanhf(mtl_detail::opaque(x)))
MTL_MATH1(sinpi, mtl_detail::sinpi_f(x))
MTL_MATH1(cospi, mtl_detail::cospi_f(x))
MTL_MATH1(tanpi, mtl_detail::tanpi_f(x))
MTL_MATH1(sign, x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? x : 0.0f)
MTL_MATH1(saturate, mtl_detail::fmin_f(mtl_detail::fmax_f(x, 0.0f), 1.0f))

MTL_MATH2(pow, __builtin_powf(mtl_detail::opaque(x), y))
MTL_MATH2(powr, x < 0.0f ? __builtin_nanf("") : __builtin_powf(mtl_detail::opaque(x), y))
MTL_MATH2(fmod, __builtin_fmodf(x, y))
MTL_MATH2(atan2, __builtin_atan2f(mtl_detail::opaque(x), y))
MTL_MATH2(fmin, mtl_detail::fmin_f(x, y))
MTL_MATH2(fmax, mtl_detail::fmax_f(x, y))
MTL_MATH2(fdim, __builtin_fdimf(x, y))
MTL_MATH2(copysign, __builtin_copysignf(x, y))
MTL_MATH2(nextafter, __builtin_nextafterf(x, y))
MTL_MATH2(divide, x / y)
MTL_MATH2(step, y < x ? 0.0f : 1.0f)

MTL_MATH3(fma, __builtin_fmaf(x, y, z))
MTL_MATH3(mad, x * y + z)
MTL_MATH3(mix, x + (y - x) * z)
MTL_MATH3(smoothstep, mtl_detail::smoothstep_f(x, y, z))

MTL_PRED(isnan, __builtin_isnan(x))
MTL_PRED(isinf, __builtin_isinf(x))
MTL_PRED(isfinite, __builtin_isfinite(x))
// isnormal of a 16-bit float asks about its own format: a half or bfloat
// subnormal widens to a normal float.
inline bool isnormal(float x) { return __builtin_isnormal(x); }
constexpr bool isnormal(half h) { return (h.bits & 0x7c00) != 0 && (h.bits & 0x7c00) != 0x7c00; }
constexpr bool isnormal(bfloat b) { return (b.bits & 0x7f80) != 0 && (b.bits & 0x7f80) != 0x7f80; }
template <class T, int N, bool P>
inline vec<bool, N> isnormal(const basic_vec<T, N, P>& v) {
  vec<bool, N> r{};
  for (int i = 0; i < N; i++) r[i] = isnormal(T(v[i]));
  return r;
}
MTL_PRED(signbit, __builtin_signbit(x) != 0)

// isordered reports whether neither argument is NaN, isunordered whether
// either is; per component for vectors (a scalar may stand for a vector).
inline bool isordered(float x, float y) { return x == x && y == y; }
inline bool isunordered(float x, float y) { return !isordered(x, y); }
template <class H, MTL_IF_F16(H)>
inline bool isordered(H x, H y) { return isordered(float(x), float(y)); }
template <class H, MTL_IF_F16(H)>
inline bool isunordered(H x, H y) { return isunordered(float(x), float(y)); }
template <class A, class B, class V = mtl_detail::mixed_vec_t<A, B>>
inline vec<bool, V::mtl_vec_size> isordered(const A& a, const B& b) {
  typedef typename V::mtl_vec_element T;
  vec<bool, V::mtl_vec_size> r{};
  for (int i = 0; i < V::mtl_vec_size; i++) r[i] = isordered(mtl_detail::at<T>(a, i), mtl_detail::at<T>(b, i));
  return r;
}
template <class A, class B, class V = mtl_detail::mixed_vec_t<A, B>>
inline vec<bool, V::mtl_vec_size> isunordered(const A& a, const B& b) {
  typedef typename V::mtl_vec_element T;
  vec<bool, V::mtl_vec_size> r{};
  for (int i = 0; i < V::mtl_vec_size; i++) r[i] = isunordered(mtl_detail::at<T>(a, i), mtl_detail::at<T>(b, i));
  return r;
}

// ilogb is the unbiased exponent of x as an int (an int vector for
// vectors): floor(log2(|x|)), subnormals included; INT_MIN for zero and
// NaN and INT_MAX for infinities (glibc's values, fixed here so they do not
// depend on the host). logb is the same as a floating-point value (-inf for
// zero, +inf for infinities).
constexpr int ilogb(float x) {
  if (x != x || x == 0.0f) return -__INT_MAX__ - 1;
  if (__builtin_isinf(x)) return __INT_MAX__;
  int e = 0;
  __builtin_frexpf(x, &e);
  return e - 1;
}
template <class H, MTL_IF_F16(H)>
constexpr int ilogb(H x) { return ilogb(float(x)); }
template <class T, int N, bool P>
inline vec<int, N> ilogb(const basic_vec<T, N, P>& v) {
  vec<int, N> r{};
  for (int i = 0; i < N; i++) r[i] = ilogb(T(v[i]));
  return r;
}
MTL_MATH1(logb, __builtin_logbf(x))

// min and max for floats follow fmin and fmax (a NaN argument loses).
inline float min(float x, float y) { return mtl_detail::fmin_f(x, y); }
inline float max(float x, float y) { return mtl_detail::fmax_f(x, y); }
template <class H, MTL_IF_F16(H)>
inline H min(H x, H y) { return H(mtl_detail::fmin_f(float(x), float(y))); }
template <class H, MTL_IF_F16(H)>
inline H max(H x, H y) { return H(mtl_detail::fmax_f(float(x), float(y))); }

// clamp for floats is fmin(fmax(x, lo), hi).
inline float clamp(float x, float lo, float hi) { return mtl_detail::fmin_f(mtl_detail::fmax_f(x, lo), hi); }
template <class H, MTL_IF_F16(H)>
inline H clamp(H x, H lo, H hi) { return H(clamp(float(x), float(lo), float(hi))); }

// Vector min, max and clamp for every element type; any argument may be a
// scalar when another is a vector.
MTL_VEC2(min)
MTL_VEC2(max)
MTL_VEC3(clamp)

// fmin3, fmax3 and fmedian3 (floats) and min3, max3 and median3 (any
// type) combine three values with min and max; vectors and scalars mix as
// for min and max.
template <class A, class B, class C>
inline auto fmin3(const A& x, const B& y, const C& z) { return fmin(fmin(x, y), z); }
template <class A, class B, class C>
inline auto fmax3(const A& x, const B& y, const C& z) { return fmax(fmax(x, y), z); }
template <class A, class B, class C>
inline auto fmedian3(const A& x, const B& y, const C& z) { return fmax(fmin(x, y), fmin(fmax(x, y), z)); }
template <class A, class B, class C>
inline auto min3(const A& x, const B& y, const C& z) { return min(min(x, y), z); }
template <class A, class B, class C>
inline auto max3(const A& x, const B& y, const C& z) { return max(max(x, y), z); }
template <class A, class B, class C>
inline auto median3(const A& x, const B& y, const C& z) { return max(min(x, y), min(max(x, y), z)); }

// pown raises x to an integer power; ldexp scales by 2^e.
inline float pown(float x, int n) { return __builtin_powf(mtl_detail::opaque(x), float(n)); }
template <class H, MTL_IF_F16(H)>
inline H pown(H x, int n) { return H(__builtin_powf(mtl_detail::opaque(float(x)), float(n))); }
inline float ldexp(float x, int e) { return __builtin_ldexpf(x, e); }
template <class H, MTL_IF_F16(H)>
inline H ldexp(H x, int e) { return H(__builtin_ldexpf(float(x), e)); }
template <class T, int N, bool P1, bool P2>
inline vec<T, N> pown(const basic_vec<T, N, P1>& x, const basic_vec<int, N, P2>& n) {
  vec<T, N> r{};
  for (int i = 0; i < N; i++) r[i] = pown(x[i], n[i]);
  return r;
}
template <class T, int N, bool P1, bool P2>
inline vec<T, N> ldexp(const basic_vec<T, N, P1>& x, const basic_vec<int, N, P2>& e) {
  vec<T, N> r{};
  for (int i = 0; i < N; i++) r[i] = ldexp(x[i], e[i]);
  return r;
}

// frexp splits x into a mantissa in [0.5, 1) and a power of two.
inline float frexp(float x, int& e) { return __builtin_frexpf(x, &e); }
template <class H, MTL_IF_F16(H)>
inline H frexp(H x, int& e) { return H(__builtin_frexpf(float(x), &e)); }
template <class T, int N, bool P1, bool P2>
inline vec<T, N> frexp(const basic_vec<T, N, P1>& x, basic_vec<int, N, P2>& e) {
  vec<T, N> r{};
  for (int i = 0; i < N; i++) r[i] = frexp(x[i], e[i]);
  return r;
}

// sincos returns sin(x) and stores cos(x) in c.
inline float sincos(float x, float& c) {
  c = __builtin_cosf(mtl_detail::opaque(x));
  return __builtin_sinf(mtl_detail::opaque(x));
}
template <class H, MTL_IF_F16(H)>
inline H sincos(H x, H& c) {
  c = H(__builtin_cosf(mtl_detail::opaque(float(x))));
  return H(__builtin_sinf(mtl_detail::opaque(float(x))));
}
template <class T, int N, bool P1, bool P2>
inline vec<T, N> sincos(const basic_vec<T, N, P1>& x, basic_vec<T, N, P2>& c) {
  vec<T, N> r{};
  for (int i = 0; i < N; i++) r[i] = sincos(x[i], c[i]);
  return r;
}

// modf splits x into fractional (returned) and integral parts.
inline float modf(float x, float& ip) { return __builtin_modff(x, &ip); }
template <class H, MTL_IF_F16(H)>
inline H modf(H x, H& ip) {
  float f;
  H r = H(__builtin_modff(float(x), &f));
  ip = H(f);
  return r;
}
template <class T, int N, bool P1, bool P2>
inline vec<T, N> modf(const basic_vec<T, N, P1>& x, basic_vec<T, N, P2>& ip) {
  vec<T, N> r{};
  for (int i = 0; i < N; i++) r[i] = modf(x[i], ip[i]);
  return r;
}

// Geometric functions, accumulating in component order. For 16-bit vectors
// each operation rounds, like any 16-bit arithmetic.
template <class T, int N, bool P1, bool P2>
inline T dot(const basic_vec<T, N, P1>& a, const basic_vec<T, N, P2>& b) {
  T s = T(a[0] * b[0]);
  for (int i = 1; i < N; i++) s = T(s + T(a[i] * b[i]));
  return s;
}
template <class T, bool P1, bool P2>
inline vec<T, 3> cross(const basic_vec<T, 3, P1>& a, const basic_vec<T, 3, P2>& b) {
  return vec<T, 3>(T(T(a[1] * b[2]) - T(a[2] * b[1])), T(T(a[2] * b[0]) - T(a[0] * b[2])),
                   T(T(a[0] * b[1]) - T(a[1] * b[0])));
}
template <class T, int N, bool P>
inline T length_squared(const basic_vec<T, N, P>& a) {
  return dot(a, a);
}
template <class T, int N, bool P>
inline T length(const basic_vec<T, N, P>& a) {
  return sqrt(dot(a, a));
}
template <class T, int N, bool P1, bool P2>
inline T distance(const basic_vec<T, N, P1>& a, const basic_vec<T, N, P2>& b) {
  return length(a - b);
}
template <class T, int N, bool P1, bool P2>
inline T distance_squared(const basic_vec<T, N, P1>& a, const basic_vec<T, N, P2>& b) {
  return length_squared(a - b);
}
template <class T, int N, bool P>
inline vec<T, N> normalize(const basic_vec<T, N, P>& a) {
  return a * rsqrt(dot(a, a));
}
template <class T, int N, bool P1, bool P2>
inline vec<T, N> reflect(const basic_vec<T, N, P1>& i, const basic_vec<T, N, P2>& n) {
  return i - T(2) * dot(n, i) * n;
}
// refract returns the refraction of incident i through a surface of
// normal n with ratio eta, or a zero vector at total internal reflection.
template <class T, int N, bool P1, bool P2>
inline vec<T, N> refract(const basic_vec<T, N, P1>& i, const basic_vec<T, N, P2>& n, typename mtl_detail::id<T>::type eta) {
  T d = dot(n, i);
  T k = T(T(1) - T(T(eta * eta) * T(T(1) - T(d * d))));
  if (k < T(0)) return vec<T, N>(T(0));
  return T(eta) * i - T(T(eta * d) + sqrt(k)) * n;
}
template <class T, int N, bool P1, bool P2, bool P3>
inline vec<T, N> faceforward(const basic_vec<T, N, P1>& n, const basic_vec<T, N, P2>& i, const basic_vec<T, N, P3>& nref) {
  return dot(nref, i) < T(0) ? vec<T, N>(n) : vec<T, N>(-n);
}

#undef MTL_MATH1
#undef MTL_MATH2
#undef MTL_MATH3
#undef MTL_PRED
#undef MTL_VEC2
#undef MTL_VEC3

}  // namespace metal
