// metal_simdgroup_matrix.h — simdgroup_matrix 8x8 and its load, store and multiply
// functions.
//
// Emulation model: every lane holds the whole 8x8 matrix (row-major). Loads
// and multiplies are computed redundantly by each lane from the same data,
// so all lanes hold identical matrices without any exchange, and a store
// writes all 64 elements from every lane (the same values). Products
// accumulate over k = 0..7 in order, each step one fused multiply-add
// computed in float and rounded to the element type (so per element for
// half and bfloat).
//
// thread_elements() gives lane l the elements 2l and 2l+1 in row-major order
// (row l/4, columns 2(l%4) and 2(l%4)+1), as a reference into the lane's own
// copy: writing through it changes only that lane's copy.
#pragma once
#include "metal_scalar.h"
#include "metal_vector.h"

namespace metal {

template <class T, int Cols, int Rows>
struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8, "only 8x8 simdgroup matrices are supported");
  alignas(16) T mtl_e[64];

  simdgroup_matrix() = default;
  // A scalar makes a diagonal matrix with that value.
  constexpr explicit simdgroup_matrix(T diag) : mtl_e{} {
    for (int i = 0; i < 64; i++) mtl_e[i] = T(0);
    for (int i = 0; i < 8; i++) mtl_e[i * 9] = diag;
  }

  vec<T, 2>& thread_elements() {
    return *reinterpret_cast<vec<T, 2>*>(&mtl_e[2 * (mtl_rt::ctx().thread_index_in_simdgroup & 31)]);
  }
  const vec<T, 2>& thread_elements() const {
    return *reinterpret_cast<const vec<T, 2>*>(&mtl_e[2 * (mtl_rt::ctx().thread_index_in_simdgroup & 31)]);
  }
};

typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

// make_filled_simdgroup_matrix returns a matrix with every element v.
template <class T, int Cols, int Rows>
inline simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(T v) {
  simdgroup_matrix<T, Cols, Rows> m;
  for (int i = 0; i < 64; i++) m.mtl_e[i] = v;
  return m;
}

// simdgroup_load reads the 8x8 block at matrix_origin (x = column, y = row)
// of a row-major source with elements_per_row elements per row; transposed,
// element (r, c) comes from source row origin.y + c, column origin.x + r.
template <class T, int C, int R, class U>
inline void simdgroup_load(simdgroup_matrix<T, C, R>& d, const U* src, ulong elements_per_row = 8,
                           ulong2 matrix_origin = ulong2(0), bool transpose_matrix = false) {
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++) {
      ulong row = transpose_matrix ? ulong(c) : ulong(r);
      ulong col = transpose_matrix ? ulong(r) : ulong(c);
      d.mtl_e[r * 8 + c] = T(src[(matrix_origin.y + row) * elements_per_row + matrix_origin.x + col]);
    }
}

// simdgroup_store writes the matrix to the block at matrix_origin, the
// inverse of simdgroup_load.
template <class T, int C, int R, class U>
inline void simdgroup_store(const simdgroup_matrix<T, C, R>& a, U* dst, ulong elements_per_row = 8,
                            ulong2 matrix_origin = ulong2(0), bool transpose_matrix = false) {
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++) {
      ulong row = transpose_matrix ? ulong(c) : ulong(r);
      ulong col = transpose_matrix ? ulong(r) : ulong(c);
      dst[(matrix_origin.y + row) * elements_per_row + matrix_origin.x + col] = U(a.mtl_e[r * 8 + c]);
    }
}

namespace mtl_detail {
// matmul_acc sets out = a * b (+ c when c is not null), accumulating each
// element in order k = 0..7 with a float fused multiply-add rounded to the
// destination type after every step. out may alias a, b or c.
template <class TD, class TA, class TB, class TC>
inline void matmul_acc(TD* out, const TA* a, const TB* b, const TC* c) {
  TD tmp[64];
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      float acc = c ? float(TD(c[i * 8 + j])) : 0.0f;
      for (int k = 0; k < 8; k++) acc = float(TD(__builtin_fmaf(float(a[i * 8 + k]), float(b[k * 8 + j]), acc)));
      tmp[i * 8 + j] = TD(acc);
    }
  for (int i = 0; i < 64; i++) out[i] = tmp[i];
}
}  // namespace mtl_detail

// simdgroup_multiply sets d = a * b. The operands may have other element
// types than d (half inputs into a float result); the result rounds to d's.
template <class TD, class TA, class TB, int C, int R>
inline void simdgroup_multiply(simdgroup_matrix<TD, C, R>& d, const simdgroup_matrix<TA, C, R>& a,
                               const simdgroup_matrix<TB, C, R>& b) {
  mtl_detail::matmul_acc<TD, TA, TB, TD>(d.mtl_e, a.mtl_e, b.mtl_e, nullptr);
}

// simdgroup_multiply_accumulate sets d = a * b + c.
template <class TD, class TA, class TB, class TC, int C, int R>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<TD, C, R>& d, const simdgroup_matrix<TA, C, R>& a,
                                          const simdgroup_matrix<TB, C, R>& b, const simdgroup_matrix<TC, C, R>& c) {
  mtl_detail::matmul_acc<TD, TA, TB, TC>(d.mtl_e, a.mtl_e, b.mtl_e, c.mtl_e);
}

}  // namespace metal
