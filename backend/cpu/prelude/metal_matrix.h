// metal_matrix.h — Metal's matrix types (floatCxR, halfCxR for C, R in
// 2..4): column-major, C columns of vec<T,R>. Products accumulate in a fixed
// order: matrix * vector sums the scaled columns from column 0 up, vector *
// matrix is one dot product per column.
#pragma once
#include "metal_math.h"
#include "metal_scalar.h"
#include "metal_vector.h"

namespace metal {

template <class T, int C, int R>
struct matrix {
  static_assert(C >= 2 && C <= 4 && R >= 2 && R <= 4, "matrix dimensions are 2 to 4");
  vec<T, R> columns[C];

  matrix() = default;
  // A scalar makes a diagonal matrix with that value.
  constexpr explicit matrix(T diag) : columns{} {
    for (int c = 0; c < C; c++)
      for (int r = 0; r < R; r++) columns[c][r] = c == r ? diag : T(0);
  }
  // C column vectors, or C*R scalars in column-major order.
  template <class A, class B, class... Rest,
            typename std::enable_if<sizeof...(Rest) + 2 == C || sizeof...(Rest) + 2 == C * R, int>::type = 0>
  constexpr matrix(const A& a, const B& b, const Rest&... rest) : columns{} {
    if constexpr (sizeof...(Rest) + 2 == C && C != C * R) {
      const vec<T, R> cols[C] = {vec<T, R>(a), vec<T, R>(b), vec<T, R>(rest)...};
      for (int c = 0; c < C; c++) columns[c] = cols[c];
    } else {
      const T s[C * R] = {T(a), T(b), T(rest)...};
      for (int c = 0; c < C; c++)
        for (int r = 0; r < R; r++) columns[c][r] = s[c * R + r];
    }
  }
  template <class U, typename std::enable_if<!std::is_same<U, T>::value, int>::type = 0>
  constexpr explicit matrix(const matrix<U, C, R>& o) : columns{} {
    for (int c = 0; c < C; c++) columns[c] = vec<T, R>(o.columns[c]);
  }

  constexpr vec<T, R>& operator[](int c) { return columns[c]; }
  constexpr const vec<T, R>& operator[](int c) const { return columns[c]; }
};

template <class T, int C, int R>
constexpr vec<T, R> operator*(const matrix<T, C, R>& m, const vec<T, C>& v) {
  vec<T, R> r = m[0] * v[0];
  for (int c = 1; c < C; c++) r = r + m[c] * v[c];
  return r;
}
template <class T, int C, int R>
constexpr vec<T, C> operator*(const vec<T, R>& v, const matrix<T, C, R>& m) {
  vec<T, C> r{};
  for (int c = 0; c < C; c++) r[c] = dot(v, m[c]);
  return r;
}
template <class T, int K, int R, int C>
MTL_FN constexpr matrix<T, C, R> operator*(const matrix<T, K, R>& a, const matrix<T, C, K>& b) {
  matrix<T, C, R> r;
  for (int c = 0; c < C; c++) r[c] = a * b[c];
  return r;
}
template <class T, int C, int R>
MTL_FN constexpr matrix<T, C, R> operator*(const matrix<T, C, R>& m, typename mtl_detail::id<T>::type s) {
  matrix<T, C, R> r;
  for (int c = 0; c < C; c++) r[c] = m[c] * s;
  return r;
}
template <class T, int C, int R>
constexpr matrix<T, C, R> operator*(typename mtl_detail::id<T>::type s, const matrix<T, C, R>& m) {
  return m * s;
}
template <class T, int C, int R>
MTL_FN constexpr matrix<T, C, R> operator+(const matrix<T, C, R>& a, const matrix<T, C, R>& b) {
  matrix<T, C, R> r;
  for (int c = 0; c < C; c++) r[c] = a[c] + b[c];
  return r;
}
template <class T, int C, int R>
MTL_FN constexpr matrix<T, C, R> operator-(const matrix<T, C, R>& a, const matrix<T, C, R>& b) {
  matrix<T, C, R> r;
  for (int c = 0; c < C; c++) r[c] = a[c] - b[c];
  return r;
}
template <class T, int C, int R>
MTL_FN constexpr matrix<T, R, C> transpose(const matrix<T, C, R>& m) {
  matrix<T, R, C> r;
  for (int c = 0; c < C; c++)
    for (int i = 0; i < R; i++) r[i][c] = m[c][i];
  return r;
}

#define MTL_MATRIX_TYPEDEFS(T, name)                                                                          \
  typedef matrix<T, 2, 2> name##2x2;                                                                         \
  typedef matrix<T, 2, 3> name##2x3;                                                                         \
  typedef matrix<T, 2, 4> name##2x4;                                                                         \
  typedef matrix<T, 3, 2> name##3x2;                                                                         \
  typedef matrix<T, 3, 3> name##3x3;                                                                         \
  typedef matrix<T, 3, 4> name##3x4;                                                                         \
  typedef matrix<T, 4, 2> name##4x2;                                                                         \
  typedef matrix<T, 4, 3> name##4x3;                                                                         \
  typedef matrix<T, 4, 4> name##4x4;
MTL_MATRIX_TYPEDEFS(float, float)
MTL_MATRIX_TYPEDEFS(half, half)
#undef MTL_MATRIX_TYPEDEFS

static_assert(sizeof(float3x3) == 48 && alignof(float4x4) == 16 && sizeof(half2x2) == 8, "matrix layout");

}  // namespace metal
