// metal_internal.h: the __metal_* functions of Apple's Metal headers that
// kernels call directly (MLX's bf16_math.h wraps them for bfloat), as
// metal_stdlib's own functions; the fast flag is the fast:: choice, which
// the cpu backend's math ignores.
#ifndef MTL_METAL_INTERNAL_H
#define MTL_METAL_INTERNAL_H
#ifndef __METAL_MAYBE_FAST_MATH__
#define __METAL_MAYBE_FAST_MATH__ false
#endif
#ifndef __METAL_FAST_MATH__
#define __METAL_FAST_MATH__ true
#endif
#ifndef __METAL_PRECISE_MATH__
#define __METAL_PRECISE_MATH__ false
#endif
namespace metal {

template <class T> inline T __metal_acos(T x, bool = false) { return metal::acos(x); }
template <class T> inline T __metal_acosh(T x, bool = false) { return metal::acosh(x); }
template <class T> inline T __metal_asin(T x, bool = false) { return metal::asin(x); }
template <class T> inline T __metal_asinh(T x, bool = false) { return metal::asinh(x); }
template <class T> inline T __metal_atan(T x, bool = false) { return metal::atan(x); }
template <class T> inline T __metal_atanh(T x, bool = false) { return metal::atanh(x); }
template <class T> inline T __metal_ceil(T x, bool = false) { return metal::ceil(x); }
template <class T> inline T __metal_cos(T x, bool = false) { return metal::cos(x); }
template <class T> inline T __metal_cosh(T x, bool = false) { return metal::cosh(x); }
template <class T> inline T __metal_cospi(T x, bool = false) { return metal::cospi(x); }
template <class T> inline T __metal_exp(T x, bool = false) { return metal::exp(x); }
template <class T> inline T __metal_exp10(T x, bool = false) { return metal::exp10(x); }
template <class T> inline T __metal_exp2(T x, bool = false) { return metal::exp2(x); }
template <class T> inline T __metal_fabs(T x, bool = false) { return metal::abs(x); }
template <class T> inline T __metal_floor(T x, bool = false) { return metal::floor(x); }
template <class T> inline T __metal_fract(T x, bool = false) { return metal::fract(x); }
template <class T> inline T __metal_log(T x, bool = false) { return metal::log(x); }
template <class T> inline T __metal_log10(T x, bool = false) { return metal::log10(x); }
template <class T> inline T __metal_log2(T x, bool = false) { return metal::log2(x); }
template <class T> inline T __metal_rint(T x, bool = false) { return metal::rint(x); }
template <class T> inline T __metal_round(T x, bool = false) { return metal::round(x); }
template <class T> inline T __metal_rsqrt(T x, bool = false) { return metal::rsqrt(x); }
template <class T> inline T __metal_sin(T x, bool = false) { return metal::sin(x); }
template <class T> inline T __metal_sinh(T x, bool = false) { return metal::sinh(x); }
template <class T> inline T __metal_sinpi(T x, bool = false) { return metal::sinpi(x); }
template <class T> inline T __metal_sqrt(T x, bool = false) { return metal::sqrt(x); }
template <class T> inline T __metal_tan(T x, bool = false) { return metal::tan(x); }
template <class T> inline T __metal_tanh(T x, bool = false) { return metal::tanh(x); }
template <class T> inline T __metal_tanpi(T x, bool = false) { return metal::tanpi(x); }
template <class T> inline T __metal_trunc(T x, bool = false) { return metal::trunc(x); }
template <class T> inline T __metal_atan2(T x, T y, bool = false) { return metal::atan2(x, y); }
template <class T> inline T __metal_fmax(T x, T y, bool = false) { return metal::fmax(x, y); }
template <class T> inline T __metal_fmin(T x, T y, bool = false) { return metal::fmin(x, y); }
template <class T> inline T __metal_fmod(T x, T y, bool = false) { return metal::fmod(x, y); }
template <class T> inline T __metal_pow(T x, T y, bool = false) { return metal::pow(x, y); }
template <class T> inline T __metal_powr(T x, T y, bool = false) { return metal::powr(x, y); }
template <class T> inline T __metal_divide(T x, T y, bool = false) { return x / y; }
template <class T> inline T __metal_fma(T x, T y, T z, bool = false) { return metal::fma(x, y, z); }
template <class T> inline T __metal_fmax3(T x, T y, T z, bool = false) { return metal::fmax3(x, y, z); }
template <class T> inline T __metal_fmin3(T x, T y, T z, bool = false) { return metal::fmin3(x, y, z); }
template <class T> inline T __metal_fmedian3(T x, T y, T z, bool = false) { return metal::fmedian3(x, y, z); }
template <class T, class E> inline T __metal_frexp(T x, E e) { return metal::frexp(x, *e); }
template <class T, class K> inline T __metal_ldexp(T x, K k, bool = false) { return metal::ldexp(x, k); }
template <class T> inline T __metal_nextafter(T x, T y) { return metal::nextafter(x, y); }
template <class T> inline T __metal_simd_sum(T x) { return metal::simd_sum(x); }
template <class T> inline T __metal_simd_product(T x) { return metal::simd_product(x); }
template <class T> inline T __metal_simd_max(T x) { return metal::simd_max(x); }
template <class T> inline T __metal_simd_min(T x) { return metal::simd_min(x); }
template <class T> inline T __metal_simd_xor(T x) { return metal::simd_xor(x); }
template <class T> inline T __metal_simd_prefix_inclusive_sum(T x) { return metal::simd_prefix_inclusive_sum(x); }
template <class T> inline T __metal_simd_prefix_exclusive_sum(T x) { return metal::simd_prefix_exclusive_sum(x); }
template <class T> inline T __metal_simd_prefix_inclusive_product(T x) { return metal::simd_prefix_inclusive_product(x); }
template <class T> inline T __metal_simd_prefix_exclusive_product(T x) { return metal::simd_prefix_exclusive_product(x); }
template <class T, class L> inline T __metal_simd_broadcast(T x, L l) { return metal::simd_broadcast(x, l); }
template <class T, class L> inline T __metal_simd_shuffle(T x, L l) { return metal::simd_shuffle(x, l); }
template <class T, class L> inline T __metal_simd_shuffle_down(T x, L l) { return metal::simd_shuffle_down(x, l); }
template <class T, class L> inline T __metal_simd_shuffle_up(T x, L l) { return metal::simd_shuffle_up(x, l); }
template <class T, class L> inline T __metal_simd_shuffle_xor(T x, L l) { return metal::simd_shuffle_xor(x, l); }
template <class T, class L> inline T __metal_simd_shuffle_rotate_down(T x, L l) { return metal::simd_shuffle_rotate_down(x, l); }
template <class T, class L> inline T __metal_simd_shuffle_rotate_up(T x, L l) { return metal::simd_shuffle_rotate_up(x, l); }
template <class T, class D> inline T __metal_simd_shuffle_and_fill_down(T x, T f, D d) { return metal::simd_shuffle_and_fill_down(x, f, d); }
template <class T, class D, class M> inline T __metal_simd_shuffle_and_fill_down(T x, T f, D d, M m) { return metal::simd_shuffle_and_fill_down(x, f, d, m); }
template <class T, class D> inline T __metal_simd_shuffle_and_fill_up(T x, T f, D d) { return metal::simd_shuffle_and_fill_up(x, f, d); }
template <class T, class D, class M> inline T __metal_simd_shuffle_and_fill_up(T x, T f, D d, M m) { return metal::simd_shuffle_and_fill_up(x, f, d, m); }
template <class T> inline T __metal_get_simdgroup_size(T) { return T(32); }

// mtl_anon<T> stands for a member of type T of an anonymous struct inside
// an anonymous union (ggml's block formats), which C++ allows only for
// types without constructors: T's bytes, read as T (or as float, where T
// converts to it) and assigned from T. half(m) of one is ambiguous, as
// both conversions reach a constructor of half; half h = m is not.
template <class T>
struct mtl_anon {
  alignas(T) unsigned char mtl_bytes[sizeof(T)];
  T mtl_get() const {
    T v;
    unsigned char* d = reinterpret_cast<unsigned char*>(&v);
    for (unsigned i = 0; i < sizeof(T); i++) d[i] = mtl_bytes[i];
    return v;
  }
  operator T() const { return mtl_get(); }
  // const float d = xb->d (ggml): to float too, as T converts to it.
  template <class U, typename std::enable_if<std::is_same<U, float>::value && !std::is_same<U, T>::value &&
                                                 std::is_convertible<T, U>::value, int>::type = 0>
  operator U() const { return U(mtl_get()); }
  mtl_anon& operator=(T v) {
    const unsigned char* s = reinterpret_cast<const unsigned char*>(&v);
    for (unsigned i = 0; i < sizeof(T); i++) mtl_bytes[i] = s[i];
    return *this;
  }
  // &xb->d points to the member as a T (ggml's q2_K: device const half *
  // dh = &x[ib].d): its bytes are T's.
  T* operator&() { return reinterpret_cast<T*>(mtl_bytes); }
  const T* operator&() const { return reinterpret_cast<const T*>(mtl_bytes); }
};

// Arithmetic and comparisons read the member as T (ggml's q4_1, q4_K:
// xb->d / 16.h), whose operators are templates a conversion would not
// reach.
#define MTL_ANON_OP(op)                                                                             \
  template <class T, class U>                                                                       \
  inline auto operator op(const mtl_anon<T>& a, const U& b)->decltype(std::declval<T>() op b) {     \
    return a.mtl_get() op b;                                                                        \
  }                                                                                                 \
  template <class T, class U, typename std::enable_if<!std::is_same<U, mtl_anon<T>>::value, int>::type = 0> \
  inline auto operator op(const U& a, const mtl_anon<T>& b)->decltype(a op std::declval<T>()) {     \
    return a op b.mtl_get();                                                                        \
  }
MTL_ANON_OP(+)
MTL_ANON_OP(-)
MTL_ANON_OP(*)
MTL_ANON_OP(/)
#undef MTL_ANON_OP

}  // namespace metal
#endif
