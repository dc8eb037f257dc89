// metal_simdgroup_matrix.h — simdgroup_matrix and its load, store and
// multiply functions. Metal's simdgroup matrices are 8x8 of float, half or
// bfloat (simdgroup_float8x8, simdgroup_half8x8, simdgroup_bfloat8x8);
// other sizes and element types do not compile, as in Metal.
//
// Emulation model: the matrix is distributed over the simd group as on
// Apple GPUs. Lane l owns two adjacent elements of one row: row
// 4*l[4] + 2*l[2] + l[1], columns c and c+1 with c = 4*l[3] + 2*l[0]
// (l[k] is bit k of the lane index). That is the layout Apple's hardware
// uses and that kernels which fill thread_elements() from memory themselves
// rely on (MLX's steel GEMM computes the same coordinates in
// BaseMMAFrag::get_coord). thread_elements() is a reference to the two.
// Each lane's simdgroup_matrix stores all 64 elements, but only its own two
// are authoritative: the rest is a cache, refreshed by the operations that
// need the whole matrix.
//
//   - simdgroup_load: each lane reads its own elements, then one simd_exchange
//     gives every lane the whole matrix. No lane goes on before every lane
//     has read, so a lane storing to the same memory afterwards (an in-place
//     update) cannot feed another lane's load.
//   - simdgroup_multiply(_accumulate): one simd_exchange of every lane's own
//     elements of the operands rebuilds the whole operands (so writes through
//     thread_elements() count), then each lane computes its own elements of
//     the result: a sum over k = 0..7 in order, each step one fused
//     multiply-add computed in float and rounded to the result's element
//     type (so per step for half and bfloat).
//   - simdgroup_store: each lane writes its own elements, then a simd-group
//     barrier, so no lane reads the destination before every lane wrote.
//
// Every simdgroup_matrix operation is therefore a simd-group collective: as
// on the GPU, all lanes of the simd group must reach it.
#pragma once
#include "metal_scalar.h"
#include "metal_simd.h"
#include "metal_vector.h"

namespace metal {

namespace mtl_detail {

// matrix_row and matrix_col are the row and the first column of lane l's
// two elements; matrix_first is their row-major index (always even).
constexpr int matrix_row(uint32_t l) { return int(((l >> 2) & 4u) | ((l >> 1) & 3u)); }
constexpr int matrix_col(uint32_t l) { return int(((l >> 1) & 4u) | ((l & 1u) << 1)); }
constexpr int matrix_first(uint32_t l) { return matrix_row(l) * 8 + matrix_col(l); }

inline uint32_t matrix_lane() { return mtl_rt::ctx().thread_index_in_simdgroup & 31; }

template <class T>
struct is_matrix_element
    : std::integral_constant<bool, std::is_same<T, float>::value || std::is_same<T, half>::value ||
                                       std::is_same<T, bfloat>::value> {};

}  // namespace mtl_detail

template <class T, int Cols, int Rows>
struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8, "Metal's simdgroup matrices are 8x8");
  static_assert(mtl_detail::is_matrix_element<T>::value, "simdgroup_matrix elements are float, half or bfloat");
  alignas(16) T mtl_e[64];

  simdgroup_matrix() = default;
  // A scalar makes a diagonal matrix with that value.
  constexpr explicit simdgroup_matrix(T diag) : mtl_e{} {
    for (int i = 0; i < 64; i++) mtl_e[i] = T(0);
    for (int i = 0; i < 8; i++) mtl_e[i * 9] = diag;
  }

  MTL_FN vec<T, 2>& thread_elements() {
    return *reinterpret_cast<vec<T, 2>*>(&mtl_e[mtl_detail::matrix_first(mtl_detail::matrix_lane())]);
  }
  MTL_FN const vec<T, 2>& thread_elements() const {
    return *reinterpret_cast<const vec<T, 2>*>(&mtl_e[mtl_detail::matrix_first(mtl_detail::matrix_lane())]);
  }
};

typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

// make_filled_simdgroup_matrix returns a matrix with every element v; Rows
// defaults to Cols (make_filled_simdgroup_matrix<float, 8>(0.0f)).
template <class T, int Cols, int Rows = Cols>
inline simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(const T v) {
  simdgroup_matrix<T, Cols, Rows> m;
  for (int i = 0; i < 64; i++) m.mtl_e[i] = v;
  return m;
}

namespace mtl_detail {

// owned is one lane's two elements of a matrix.
template <class T>
struct owned {
  T e[2];
};

// source_index is the index in a row-major source of element (r, c) of the
// 8x8 block at origin, transposed or not.
inline ulong source_index(int r, int c, ulong elements_per_row, ulong2 origin, bool transpose) {
  ulong row = transpose ? ulong(c) : ulong(r);
  ulong col = transpose ? ulong(r) : ulong(c);
  return (origin.y + row) * elements_per_row + origin.x + col;
}

// operands is what a multiply exchanges: each lane's own elements of a, b
// and c.
template <class TA, class TB, class TC>
struct operands {
  owned<TA> a;
  owned<TB> b;
  owned<TC> c;
};

// matmul sets the caller's own elements of d to a * b (+ c when
// accumulate), after rebuilding the whole operands from every lane.
template <class TD, class TA, class TB, class TC>
inline void matmul(TD* d, const TA* a, const TB* b, const TC* c, bool accumulate) {
  int first = matrix_first(matrix_lane());
  operands<TA, TB, TC> mine{{{a[first], a[first + 1]}}, {{b[first], b[first + 1]}}, {{TC(0), TC(0)}}};
  if (accumulate) mine.c = owned<TC>{{c[first], c[first + 1]}};
  lanes<operands<TA, TB, TC>> l = exchange(mine);
  TA fa[64];
  TB fb[64];
  for (uint32_t i = 0; i < 32; i++) {
    int f = matrix_first(i);
    fa[f] = l.v[i].a.e[0];
    fa[f + 1] = l.v[i].a.e[1];
    fb[f] = l.v[i].b.e[0];
    fb[f + 1] = l.v[i].b.e[1];
  }
  for (int k2 = 0; k2 < 2; k2++) {
    int idx = first + k2;
    int i = idx / 8, j = idx % 8;
    float acc = accumulate ? float(TD(mine.c.e[k2])) : 0.0f;
    for (int k = 0; k < 8; k++) acc = float(TD(__builtin_fmaf(float(fa[i * 8 + k]), float(fb[k * 8 + j]), acc)));
    d[idx] = TD(acc);
  }
}

}  // namespace mtl_detail

// simdgroup_load reads the 8x8 block at matrix_origin (x = column, y = row)
// of a row-major source with elements_per_row elements per row; transposed,
// element (r, c) comes from source row origin.y + c, column origin.x + r.
template <class T, int C, int R, class U>
inline void simdgroup_load(simdgroup_matrix<T, C, R>& d, const U* src, ulong elements_per_row = 8,
                           ulong2 matrix_origin = ulong2(0), bool transpose_matrix = false) {
  int first = mtl_detail::matrix_first(mtl_detail::matrix_lane());
  mtl_detail::owned<T> mine;
  for (int k = 0; k < 2; k++) {
    int idx = first + k;
    mine.e[k] = T(src[mtl_detail::source_index(idx / 8, idx % 8, elements_per_row, matrix_origin, transpose_matrix)]);
  }
  mtl_detail::lanes<mtl_detail::owned<T>> l = mtl_detail::exchange(mine);
  for (uint32_t i = 0; i < 32; i++) {
    int f = mtl_detail::matrix_first(i);
    d.mtl_e[f] = l.v[i].e[0];
    d.mtl_e[f + 1] = l.v[i].e[1];
  }
}

// simdgroup_store writes the matrix to the block at matrix_origin, the
// inverse of simdgroup_load: each lane writes its own elements.
template <class T, int C, int R, class U>
inline void simdgroup_store(const simdgroup_matrix<T, C, R>& a, U* dst, ulong elements_per_row = 8,
                            ulong2 matrix_origin = ulong2(0), bool transpose_matrix = false) {
  int first = mtl_detail::matrix_first(mtl_detail::matrix_lane());
  for (int k = 0; k < 2; k++) {
    int idx = first + k;
    dst[mtl_detail::source_index(idx / 8, idx % 8, elements_per_row, matrix_origin, transpose_matrix)] = U(a.mtl_e[idx]);
  }
  mtl_rt::simdgroup_barrier();
}

// simdgroup_multiply sets d = a * b. The operands may have other element
// types than d (half inputs into a float result); the result rounds to d's.
template <class TD, class TA, class TB, int C, int R>
inline void simdgroup_multiply(simdgroup_matrix<TD, C, R>& d, const simdgroup_matrix<TA, C, R>& a,
                               const simdgroup_matrix<TB, C, R>& b) {
  mtl_detail::matmul<TD, TA, TB, TD>(d.mtl_e, a.mtl_e, b.mtl_e, nullptr, false);
}

// simdgroup_multiply_accumulate sets d = a * b + c.
template <class TD, class TA, class TB, class TC, int C, int R>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<TD, C, R>& d, const simdgroup_matrix<TA, C, R>& a,
                                          const simdgroup_matrix<TB, C, R>& b, const simdgroup_matrix<TC, C, R>& c) {
  mtl_detail::matmul<TD, TA, TB, TC>(d.mtl_e, a.mtl_e, b.mtl_e, c.mtl_e, true);
}

// a * b is the product of two matrices, a new matrix of a's type (MLX's
// Winograd transforms: (G * g) * Gt).
template <class T, class U, int C, int R>
inline simdgroup_matrix<T, C, R> operator*(const simdgroup_matrix<T, C, R>& a, const simdgroup_matrix<U, C, R>& b) {
  simdgroup_matrix<T, C, R> d;
  simdgroup_multiply(d, a, b);
  return d;
}

}  // namespace metal
