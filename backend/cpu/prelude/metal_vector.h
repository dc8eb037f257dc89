// metal_vector.h — Metal vector types: vec<T,N> (N = 2, 3, 4) with Metal's
// size and alignment (T3 is as large and as aligned as T4; T2 and T4 are
// aligned to their size), the packed_ variants (size N*sizeof(T), aligned to
// T), constructors from scalars and mixed vectors, element access, swizzles
// and the elementwise operators.
//
// Swizzles are member functions (`v.xy()`, `v.zyx()`), the spelling the
// translator rewrites `v.xy` to. A swizzle returns a proxy that is a vec
// value (a copy of the selected components) and remembers its source: when
// the proxy itself is assigned to as a temporary (`v.xy() = e`,
// `v.zyx() += e`) the components are written back. A named copy of a proxy
// (`auto p = v.xy();`) behaves as a plain value and never writes back.
#pragma once
#include <initializer_list>
#include <utility>

#include "metal_scalar.h"
#include "metal_swizzle.h"

namespace metal {

template <class T, int N, bool Packed>
struct basic_vec;

// vec is the Metal vector type vec<T,N>.
template <class T, int N>
using vec = basic_vec<T, N, false>;

// packed_vec is the packed vector type: no padding, aligned to T.
template <class T, int N>
using packed_vec = basic_vec<T, N, true>;

namespace mtl_detail {

// arr carries N elements between the constructors and the storage.
template <class T, int N>
struct arr { T v[N]; };

// is_vec is true for vector types and the swizzle proxies derived from them.
template <class T, class = void>
struct is_vec : std::false_type {};
template <class T>
struct is_vec<T, typename std::enable_if<sizeof(typename T::mtl_vec_element) != 0>::type> : std::true_type {};

// components is the number of scalars a constructor argument contributes.
template <class T, class = void>
struct components : std::integral_constant<int, 1> {};
template <class T>
struct components<T, typename std::enable_if<is_vec<T>::value>::type> : std::integral_constant<int, T::mtl_vec_size> {};

template <class... A>
struct total_components : std::integral_constant<int, 0> {};
template <class A, class... R>
struct total_components<A, R...> : std::integral_constant<int, components<A>::value + total_components<R...>::value> {};

template <class... A>
struct all_ctor_args : std::true_type {};
template <class A, class... R>
struct all_ctor_args<A, R...>
    : std::integral_constant<bool, (is_scalar<A>::value || is_vec<A>::value) && all_ctor_args<R...>::value> {};

template <class T, int N, class A>
constexpr void put(arr<T, N>& r, int& k, const A& a) {
  if constexpr (is_vec<A>::value) {
    for (int i = 0; i < A::mtl_vec_size; i++) r.v[k++] = T(a[i]);
  } else {
    r.v[k++] = T(a);
  }
}

// flatten lays out the components of a mixed constructor argument list.
template <class T, int N, class... A>
constexpr arr<T, N> flatten(const A&... a) {
  arr<T, N> r{};
  int k = 0;
  (put(r, k, a), ...);
  return r;
}

template <class T, int N>
constexpr arr<T, N> splat(T s) {
  arr<T, N> r{};
  for (int i = 0; i < N; i++) r.v[i] = s;
  return r;
}

// brace_elem is one element of a braced vector initializer: a scalar,
// converted to the element type as a constructor argument is.
template <class T>
struct brace_elem {
  T v;
  template <class S, typename std::enable_if<is_scalar<S>::value, int>::type = 0>
  constexpr brace_elem(S s) : v(T(s)) {}
};

// excess_initializers is reached only by a braced list of more scalars
// than the vector has, which Metal rejects: it is no constant expression,
// so a constant initializer does not compile, and it stops the kernel.
[[noreturn]] MTL_FN inline void excess_initializers() {
#if defined(__CUDA_ARCH__)
  __trap();
#else
  __builtin_trap();
#endif
}

// braced lays out a braced initializer: its scalars lead, the components
// it leaves out are zero.
template <class T, int N>
constexpr arr<T, N> braced(std::initializer_list<brace_elem<T>> l) {
  arr<T, N> r{};
  if (l.size() > size_t(N)) excess_initializers();
  int k = 0;
  for (const brace_elem<T>& e : l) r.v[k++] = e.v;
  return r;
}

// vec_align is Metal's alignment for vec<T,N> (or packed_vec when P).
template <class T, int N, bool P>
struct vec_align : std::integral_constant<size_t, P ? alignof(T) : sizeof(T) * (N == 3 ? 4 : N)> {};

// vec_storage holds the components; the union gives indexed access at run
// time while constant evaluation uses the named members.
template <class T, int N, bool P>
struct vec_storage;

template <class T, bool P>
struct alignas(vec_align<T, 2, P>::value) vec_storage<T, 2, P> {
  union {
    struct { T x, y; };
    T mtl_e[2];
  };
  vec_storage() = default;
  constexpr vec_storage(const arr<T, 2>& a) : x(a.v[0]), y(a.v[1]) {}
  constexpr T& operator[](int i) {
    if (__builtin_is_constant_evaluated()) return i == 0 ? x : y;
    return mtl_e[i];
  }
  constexpr const T& operator[](int i) const {
    if (__builtin_is_constant_evaluated()) return i == 0 ? x : y;
    return mtl_e[i];
  }
};

template <class T, bool P>
struct alignas(vec_align<T, 3, P>::value) vec_storage<T, 3, P> {
  union {
    struct { T x, y, z; };
    T mtl_e[3];
  };
  vec_storage() = default;
  constexpr vec_storage(const arr<T, 3>& a) : x(a.v[0]), y(a.v[1]), z(a.v[2]) {}
  constexpr T& operator[](int i) {
    if (__builtin_is_constant_evaluated()) return i == 0 ? x : i == 1 ? y : z;
    return mtl_e[i];
  }
  constexpr const T& operator[](int i) const {
    if (__builtin_is_constant_evaluated()) return i == 0 ? x : i == 1 ? y : z;
    return mtl_e[i];
  }
};

template <class T, bool P>
struct alignas(vec_align<T, 4, P>::value) vec_storage<T, 4, P> {
  union {
    struct { T x, y, z, w; };
    T mtl_e[4];
  };
  vec_storage() = default;
  constexpr vec_storage(const arr<T, 4>& a) : x(a.v[0]), y(a.v[1]), z(a.v[2]), w(a.v[3]) {}
  constexpr T& operator[](int i) {
    if (__builtin_is_constant_evaluated()) return i == 0 ? x : i == 1 ? y : i == 2 ? z : w;
    return mtl_e[i];
  }
  constexpr const T& operator[](int i) const {
    if (__builtin_is_constant_evaluated()) return i == 0 ? x : i == 1 ? y : i == 2 ? z : w;
    return mtl_e[i];
  }
};

constexpr bool distinct() { return true; }
// count_args is the number of its arguments: a swizzle's component count.
template <class... A>
constexpr int count_args(A...) { return int(sizeof...(A)); }

template <class... R>
constexpr bool distinct(int a, R... r) {
  (void)a;
  return ((a != r) && ...) && distinct(r...);
}

}  // namespace mtl_detail

// vec_swizzle is the proxy a swizzle member function returns: a vec value of the
// selected components that writes them back to src when assigned to as a
// temporary. Components must be distinct to be written.
template <class T, int N, bool P, int... I>
struct vec_swizzle : vec<T, int(sizeof...(I))> {
  typedef vec<T, int(sizeof...(I))> value_type;
  basic_vec<T, N, P>* mtl_src;

  constexpr explicit vec_swizzle(const basic_vec<T, N, P>& s)
      : value_type(mtl_detail::arr<T, int(sizeof...(I))>{{s[I]...}}), mtl_src(const_cast<basic_vec<T, N, P>*>(&s)) {
    static_assert(((I < N) && ...), "swizzle component out of range for this vector");
  }
  vec_swizzle(const vec_swizzle&) = default;

  MTL_FN vec_swizzle&& operator=(const value_type& v) && {
    static_assert(mtl_detail::distinct(I...), "cannot assign to a swizzle with repeated components");
    int k = 0;
    ((( *mtl_src)[I] = v[k], (*this)[k] = v[k], k++), ...);
    return std::move(*this);
  }
  MTL_FN vec_swizzle&& operator=(const vec_swizzle& v) && { return std::move(*this) = value_type(v); }
  MTL_FN vec_swizzle& operator=(const value_type& v) & {
    value_type::operator=(v);
    return *this;
  }
  MTL_FN vec_swizzle& operator=(const vec_swizzle& v) & {
    value_type::operator=(v);
    return *this;
  }

#define MTL_SWZ_COMPOUND(op)                                                                               \
  MTL_FN vec_swizzle&& operator op##=(const value_type& v) && { return std::move(*this) = value_type(value_type(*this) op v); } \
  MTL_FN vec_swizzle& operator op##=(const value_type& v) & {                                                         \
    value_type::operator=(value_type(*this) op v);                                                        \
    return *this;                                                                                          \
  }
  MTL_SWZ_COMPOUND(+)
  MTL_SWZ_COMPOUND(-)
  MTL_SWZ_COMPOUND(*)
  MTL_SWZ_COMPOUND(/)
  MTL_SWZ_COMPOUND(%)
  MTL_SWZ_COMPOUND(&)
  MTL_SWZ_COMPOUND(|)
  MTL_SWZ_COMPOUND(^)
  MTL_SWZ_COMPOUND(<<)
  MTL_SWZ_COMPOUND(>>)
#undef MTL_SWZ_COMPOUND

  // ++ and -- on a temporary proxy (`v.xy++`) write back like +=.
  MTL_FN vec_swizzle&& operator++() && { return std::move(*this) += value_type(T(1)); }
  MTL_FN vec_swizzle&& operator--() && { return std::move(*this) -= value_type(T(1)); }
  MTL_FN value_type operator++(int) && {
    value_type old(*this);
    std::move(*this) += value_type(T(1));
    return old;
  }
  MTL_FN value_type operator--(int) && {
    value_type old(*this);
    std::move(*this) -= value_type(T(1));
    return old;
  }
  MTL_FN vec_swizzle& operator++() & { return *this += value_type(T(1)); }
  MTL_FN vec_swizzle& operator--() & { return *this -= value_type(T(1)); }
  MTL_FN value_type operator++(int) & {
    value_type old(*this);
    *this += value_type(T(1));
    return old;
  }
  MTL_FN value_type operator--(int) & {
    value_type old(*this);
    *this -= value_type(T(1));
    return old;
  }
};

namespace mtl_detail {

// Each swizzle has two spellings: name() returns the proxy, for a swizzle
// that may be written; mtl_rv_name() returns a plain vec, which the
// translator uses where the swizzle is only read, so that template
// argument deduction (`f(v.xy, w)` with template <class T> f(T, T)) sees
// the vector type itself.
#define MTL_SWZ(name, ...)                                                    \
  constexpr vec_swizzle<T, N, P, __VA_ARGS__> name() const {                    \
    return vec_swizzle<T, N, P, __VA_ARGS__>(static_cast<const basic_vec<T, N, P>&>(*this)); \
  }                                                                             \
  constexpr vec<T, count_args(__VA_ARGS__)> mtl_rv_##name() const {             \
    return name();                                                              \
  }

// vec_swizzles declares the swizzle member functions valid for N components.
template <class T, int N, bool P>
struct vec_swizzles;
template <class T, bool P>
struct vec_swizzles<T, 2, P> {
  static constexpr int N = 2;
  MTL_SWIZZLES_2
};
template <class T, bool P>
struct vec_swizzles<T, 3, P> {
  static constexpr int N = 3;
  MTL_SWIZZLES_3
};
template <class T, bool P>
struct vec_swizzles<T, 4, P> {
  static constexpr int N = 4;
  MTL_SWIZZLES_4
};
#undef MTL_SWZ

}  // namespace mtl_detail

// basic_vec is vec<T,N> (Packed false) or packed_vec<T,N> (Packed true).
template <class T, int N, bool Packed>
struct basic_vec : mtl_detail::vec_storage<T, N, Packed>, mtl_detail::vec_swizzles<T, N, Packed> {
  typedef mtl_detail::vec_storage<T, N, Packed> storage_type;
  typedef T mtl_vec_element;
  typedef T value_type;
  static constexpr int mtl_vec_size = N;

  basic_vec() = default;
  constexpr basic_vec(const mtl_detail::arr<T, N>& a) : storage_type(a) {}

  // A braced list of scalars sets the leading components and zeroes the
  // rest, as a Clang vector's initializer list does: uint4 ks = {a, b, c}
  // is (a, b, c, 0), float4 v = {1.0f} is (1, 0, 0, 0), where float4(1.0f)
  // and float4 v = 1.0f splat. A list holding a vector is not a list of
  // scalars and goes to the constructor below.
  constexpr basic_vec(std::initializer_list<mtl_detail::brace_elem<T>> l) : storage_type(mtl_detail::braced<T, N>(l)) {}

  // A scalar converts to a vector with every component equal to it.
  template <class S, typename std::enable_if<mtl_detail::is_scalar<S>::value, int>::type = 0>
  constexpr basic_vec(S s) : storage_type(mtl_detail::splat<T, N>(T(s))) {}

  // N scalars, or a mix of scalars and vectors with N components in all.
  template <class A, class B, class... R,
            typename std::enable_if<mtl_detail::all_ctor_args<A, B, R...>::value &&
                                        mtl_detail::total_components<A, B, R...>::value == N,
                                    int>::type = 0>
  constexpr basic_vec(const A& a, const B& b, const R&... r) : storage_type(mtl_detail::flatten<T, N>(a, b, r...)) {}

  // A vector of the same element type converts implicitly between packed
  // and unpacked layouts.
  template <bool Q, typename std::enable_if<Q != Packed, int>::type = 0>
  constexpr basic_vec(const basic_vec<T, N, Q>& o) : storage_type(mtl_detail::flatten<T, N>(o)) {}

  // A vector of another element type converts explicitly, elementwise.
  template <class U, bool Q, typename std::enable_if<!std::is_same<U, T>::value, int>::type = 0>
  constexpr explicit basic_vec(const basic_vec<U, N, Q>& o) : storage_type(mtl_detail::flatten<T, N>(o)) {}

  using storage_type::operator[];

#define MTL_VEC_COMPOUND(op)                                            \
  template <bool Q>                                                     \
  constexpr basic_vec& operator op##=(const basic_vec<T, N, Q>& o) {    \
    for (int i = 0; i < N; i++) (*this)[i] = T((*this)[i] op o[i]);     \
    return *this;                                                       \
  }                                                                     \
  constexpr basic_vec& operator op##=(typename mtl_detail::id<T>::type s) { \
    for (int i = 0; i < N; i++) (*this)[i] = T((*this)[i] op s);        \
    return *this;                                                       \
  }
  MTL_VEC_COMPOUND(+)
  MTL_VEC_COMPOUND(-)
  MTL_VEC_COMPOUND(*)
  MTL_VEC_COMPOUND(/)
  MTL_VEC_COMPOUND(%)
  MTL_VEC_COMPOUND(&)
  MTL_VEC_COMPOUND(|)
  MTL_VEC_COMPOUND(^)
  MTL_VEC_COMPOUND(<<)
  MTL_VEC_COMPOUND(>>)
#undef MTL_VEC_COMPOUND

  constexpr basic_vec& operator++() { return *this += T(1); }
  constexpr basic_vec& operator--() { return *this -= T(1); }
  constexpr basic_vec operator++(int) { basic_vec t = *this; *this += T(1); return t; }
  constexpr basic_vec operator--(int) { basic_vec t = *this; *this -= T(1); return t; }
};

// Elementwise binary operators: vector-vector (same element type and size,
// packed or not), vector-scalar and scalar-vector (the scalar converts to the
// element type). The result is an unpacked vector.
#define MTL_VEC_BINOP(op)                                                                      \
  template <class T, int N, bool P1, bool P2>                                                  \
  constexpr vec<T, N> operator op(const basic_vec<T, N, P1>& a, const basic_vec<T, N, P2>& b) { \
    vec<T, N> r{};                                                                             \
    for (int i = 0; i < N; i++) r[i] = T(a[i] op b[i]);                                        \
    return r;                                                                                  \
  }                                                                                            \
  template <class T, int N, bool P>                                                            \
  constexpr vec<T, N> operator op(const basic_vec<T, N, P>& a, typename mtl_detail::id<T>::type s) { \
    vec<T, N> r{};                                                                             \
    for (int i = 0; i < N; i++) r[i] = T(a[i] op s);                                           \
    return r;                                                                                  \
  }                                                                                            \
  template <class T, int N, bool P>                                                            \
  constexpr vec<T, N> operator op(typename mtl_detail::id<T>::type s, const basic_vec<T, N, P>& b) { \
    vec<T, N> r{};                                                                             \
    for (int i = 0; i < N; i++) r[i] = T(s op b[i]);                                           \
    return r;                                                                                  \
  }
MTL_VEC_BINOP(+)
MTL_VEC_BINOP(-)
MTL_VEC_BINOP(*)
MTL_VEC_BINOP(/)
MTL_VEC_BINOP(%)
MTL_VEC_BINOP(&)
MTL_VEC_BINOP(|)
MTL_VEC_BINOP(^)
MTL_VEC_BINOP(<<)
MTL_VEC_BINOP(>>)
#undef MTL_VEC_BINOP

// Elementwise comparisons and logical operators yield bool vectors.
#define MTL_VEC_BOOLOP(op)                                                                        \
  template <class T, int N, bool P1, bool P2>                                                     \
  constexpr vec<bool, N> operator op(const basic_vec<T, N, P1>& a, const basic_vec<T, N, P2>& b) { \
    vec<bool, N> r{};                                                                             \
    for (int i = 0; i < N; i++) r[i] = bool(a[i] op b[i]);                                        \
    return r;                                                                                     \
  }                                                                                               \
  template <class T, int N, bool P>                                                               \
  constexpr vec<bool, N> operator op(const basic_vec<T, N, P>& a, typename mtl_detail::id<T>::type s) { \
    vec<bool, N> r{};                                                                             \
    for (int i = 0; i < N; i++) r[i] = bool(a[i] op s);                                           \
    return r;                                                                                     \
  }                                                                                               \
  template <class T, int N, bool P>                                                               \
  constexpr vec<bool, N> operator op(typename mtl_detail::id<T>::type s, const basic_vec<T, N, P>& b) { \
    vec<bool, N> r{};                                                                             \
    for (int i = 0; i < N; i++) r[i] = bool(s op b[i]);                                           \
    return r;                                                                                     \
  }
MTL_VEC_BOOLOP(==)
MTL_VEC_BOOLOP(!=)
MTL_VEC_BOOLOP(<)
MTL_VEC_BOOLOP(<=)
MTL_VEC_BOOLOP(>)
MTL_VEC_BOOLOP(>=)
MTL_VEC_BOOLOP(&&)
MTL_VEC_BOOLOP(||)
#undef MTL_VEC_BOOLOP

template <class T, int N, bool P>
constexpr vec<T, N> operator-(const basic_vec<T, N, P>& a) {
  vec<T, N> r{};
  for (int i = 0; i < N; i++) r[i] = T(-a[i]);
  return r;
}
template <class T, int N, bool P>
constexpr vec<T, N> operator+(const basic_vec<T, N, P>& a) {
  return vec<T, N>(a);
}
template <class T, int N, bool P>
constexpr vec<T, N> operator~(const basic_vec<T, N, P>& a) {
  vec<T, N> r{};
  for (int i = 0; i < N; i++) r[i] = T(~a[i]);
  return r;
}
template <class T, int N, bool P>
constexpr vec<bool, N> operator!(const basic_vec<T, N, P>& a) {
  vec<bool, N> r{};
  for (int i = 0; i < N; i++) r[i] = !a[i];
  return r;
}

// all reports whether every component is true.
constexpr bool all(bool b) { return b; }
template <class T, int N, bool P>
constexpr bool all(const basic_vec<T, N, P>& v) {
  for (int i = 0; i < N; i++)
    if (!v[i]) return false;
  return true;
}

// any reports whether some component is true.
constexpr bool any(bool b) { return b; }
template <class T, int N, bool P>
constexpr bool any(const basic_vec<T, N, P>& v) {
  for (int i = 0; i < N; i++)
    if (v[i]) return true;
  return false;
}

// select returns c ? b : a, per component for vectors.
template <class T, typename std::enable_if<mtl_detail::is_scalar<T>::value, int>::type = 0>
constexpr T select(T a, T b, bool c) {
  return c ? b : a;
}
template <class T, int N, bool P1, bool P2, bool P3>
constexpr vec<T, N> select(const basic_vec<T, N, P1>& a, const basic_vec<T, N, P2>& b, const basic_vec<bool, N, P3>& c) {
  vec<T, N> r{};
  for (int i = 0; i < N; i++) r[i] = c[i] ? b[i] : a[i];
  return r;
}
template <class T, int N, bool P1, bool P2>
constexpr vec<T, N> select(const basic_vec<T, N, P1>& a, const basic_vec<T, N, P2>& b, bool c) {
  return c ? vec<T, N>(b) : vec<T, N>(a);
}

// as_type of a swizzle reinterprets the selected components, not the proxy.
template <class T, class E, int N, bool P, int... I>
inline T as_type(const vec_swizzle<E, N, P, I...>& x) {
  return as_type<T>(typename vec_swizzle<E, N, P, I...>::value_type(x));
}

#define MTL_VEC_TYPEDEFS(T, name)           \
  typedef vec<T, 2> name##2;                \
  typedef vec<T, 3> name##3;                \
  typedef vec<T, 4> name##4;                \
  typedef packed_vec<T, 2> packed_##name##2; \
  typedef packed_vec<T, 3> packed_##name##3; \
  typedef packed_vec<T, 4> packed_##name##4;
MTL_VEC_TYPEDEFS(float, float)
MTL_VEC_TYPEDEFS(half, half)
MTL_VEC_TYPEDEFS(bfloat, bfloat)
MTL_VEC_TYPEDEFS(int, int)
MTL_VEC_TYPEDEFS(uint, uint)
MTL_VEC_TYPEDEFS(short, short)
MTL_VEC_TYPEDEFS(ushort, ushort)
MTL_VEC_TYPEDEFS(signed char, char)
MTL_VEC_TYPEDEFS(uchar, uchar)
MTL_VEC_TYPEDEFS(bool, bool)
MTL_VEC_TYPEDEFS(long, long)
MTL_VEC_TYPEDEFS(ulong, ulong)
#undef MTL_VEC_TYPEDEFS

static_assert(sizeof(float3) == 16 && alignof(float3) == 16, "float3 layout");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2 layout");
static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4 layout");
static_assert(sizeof(half3) == 8 && alignof(half3) == 8, "half3 layout");
static_assert(sizeof(packed_float3) == 12 && alignof(packed_float3) == 4, "packed_float3 layout");
static_assert(sizeof(packed_half3) == 6 && alignof(packed_half3) == 2, "packed_half3 layout");
static_assert(sizeof(bool3) == 4 && sizeof(uchar3) == 4 && sizeof(long3) == 32, "small and wide vector layout");
static_assert(std::is_trivially_copyable<float4>::value && std::is_trivial<half4>::value, "vectors must be trivial");

}  // namespace metal
