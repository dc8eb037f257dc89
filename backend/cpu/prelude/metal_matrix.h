// metal_matrix.h — Metal's matrix types (floatCxR, halfCxR for C, R in
// 2..4; matrix<bfloat, C, R> too, which Metal has without typedefs):
// column-major, C columns of vec<T,R>. Products accumulate in a fixed
// order: matrix * vector sums the scaled columns from column 0 up, vector *
// matrix is one dot product per column. transpose and determinant are the
// matrix functions.
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

template <class T, int C, int R>
MTL_FN constexpr matrix<T, C, R> operator-(const matrix<T, C, R>& m) {
  matrix<T, C, R> r;
  for (int c = 0; c < C; c++) r[c] = -m[c];
  return r;
}
template <class T, int C, int R>
constexpr matrix<T, C, R>& operator+=(matrix<T, C, R>& a, const matrix<T, C, R>& b) {
  return a = a + b;
}
template <class T, int C, int R>
constexpr matrix<T, C, R>& operator-=(matrix<T, C, R>& a, const matrix<T, C, R>& b) {
  return a = a - b;
}
template <class T, int C, int R>
constexpr matrix<T, C, R>& operator*=(matrix<T, C, R>& a, typename mtl_detail::id<T>::type s) {
  return a = a * s;
}
template <class T, int N>
constexpr matrix<T, N, N>& operator*=(matrix<T, N, N>& a, const matrix<T, N, N>& b) {
  return a = a * b;
}
template <class T, int C, int R>
constexpr bool operator==(const matrix<T, C, R>& a, const matrix<T, C, R>& b) {
  for (int c = 0; c < C; c++)
    if (!all(a[c] == b[c])) return false;
  return true;
}
template <class T, int C, int R>
constexpr bool operator!=(const matrix<T, C, R>& a, const matrix<T, C, R>& b) {
  return !(a == b);
}

namespace mtl_detail {
// det2 and det3 are the determinants of the 2x2 and 3x3 matrices of the
// given elements (mRC is row R, column C), in float, in a fixed order:
// det2 = m00*m11 - m01*m10; det3 expands along column 0, first row first.
constexpr float det2(float m00, float m01, float m10, float m11) { return m00 * m11 - m01 * m10; }
constexpr float det3(float m00, float m01, float m02, float m10, float m11, float m12, float m20, float m21, float m22) {
  return m00 * det2(m11, m12, m21, m22) - m10 * det2(m01, m02, m21, m22) + m20 * det2(m01, m02, m11, m12);
}
}  // namespace mtl_detail

// determinant of a square matrix, computed in float by cofactor expansion
// along column 0 (rows in order, each minor the same way), each operation
// rounded to float; a half matrix's determinant is that float result
// rounded once to half.
template <class T>
constexpr T determinant(const matrix<T, 2, 2>& m) {
  return T(mtl_detail::det2(float(m[0][0]), float(m[1][0]), float(m[0][1]), float(m[1][1])));
}
template <class T>
constexpr T determinant(const matrix<T, 3, 3>& m) {
  auto e = [&](int r, int c) { return float(m[c][r]); };
  return T(mtl_detail::det3(e(0, 0), e(0, 1), e(0, 2), e(1, 0), e(1, 1), e(1, 2), e(2, 0), e(2, 1), e(2, 2)));
}
template <class T>
constexpr T determinant(const matrix<T, 4, 4>& m) {
  auto e = [&](int r, int c) { return float(m[c][r]); };
  // minor(r) is the determinant of the 3x3 matrix without row r and column 0.
  auto minor = [&](int r) {
    int a = r == 0 ? 1 : 0, b = r <= 1 ? 2 : 1, c = r <= 2 ? 3 : 2;
    return mtl_detail::det3(e(a, 1), e(a, 2), e(a, 3), e(b, 1), e(b, 2), e(b, 3), e(c, 1), e(c, 2), e(c, 3));
  };
  return T(e(0, 0) * minor(0) - e(1, 0) * minor(1) + e(2, 0) * minor(2) - e(3, 0) * minor(3));
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
