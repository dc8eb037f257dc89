// matrix.cpp — reads three 8x8 float matrices A, B, C (bit patterns) and
// prints A*B, A*B+C, the same in half, loads and stores at origins with
// strides and transposition, and each lane's thread_elements.
#include <cstdio>
#include <metal_stdlib>

#include "stub_rt.h"
using namespace metal;

template <class T>
void print(const simdgroup_matrix<T, 8, 8>& m) {
  T out[64];
  simdgroup_store(m, out);
  for (int i = 0; i < 64; i++) std::printf("%x ", (uint)as_type<typename std::conditional<sizeof(T) == 2, ushort, uint>::type>(out[i]));
  std::printf("\n");
}

int main() {
  float a[64], b[64], c[64];
  half ah[64], bh[64], ch[64];
  for (float* m : {a, b, c})
    for (int i = 0; i < 64; i++) {
      uint x;
      if (std::scanf("%x", &x) != 1) return 1;
      m[i] = as_type<float>(x);
    }
  for (int i = 0; i < 64; i++) ah[i] = a[i], bh[i] = b[i], ch[i] = c[i];
  simdgroup_float8x8 A, B, C, D;
  simdgroup_load(A, a);
  simdgroup_load(B, b);
  simdgroup_load(C, c);
  simdgroup_multiply(D, A, B);
  print(D);
  simdgroup_multiply_accumulate(D, A, B, C);
  print(D);
  simdgroup_half8x8 Ah, Bh, Ch, Dh;
  simdgroup_load(Ah, ah);
  simdgroup_load(Bh, bh);
  simdgroup_load(Ch, ch);
  simdgroup_multiply_accumulate(Dh, Ah, Bh, Ch);
  print(Dh);
  // Mixed precision: half operands accumulate into a float matrix.
  simdgroup_float8x8 Dm;
  simdgroup_multiply_accumulate(Dm, Ah, Bh, C);
  print(Dm);
  // In-place: the destination may alias an operand.
  simdgroup_multiply(A, A, B);
  print(A);

  float big[256], dst[256] = {};
  for (int i = 0; i < 256; i++) big[i] = float(i);
  simdgroup_float8x8 L, T;
  simdgroup_load(L, big, 16, ulong2(3, 5));
  print(L);
  simdgroup_load(T, big, 16, ulong2(2, 1), true);
  print(T);
  simdgroup_store(L, dst, 16, ulong2(4, 6), true);
  for (int i = 0; i < 256; i++) std::printf("%g ", dst[i]);
  std::printf("\n");
  print(make_filled_simdgroup_matrix<float, 8, 8>(2.5f));
  print(simdgroup_float8x8(3.0f));

  float e[64][2];
  mtl_test::run_threads(32, [&] {
    simdgroup_float8x8 M;
    simdgroup_load(M, big, 8);
    uint lane = mtl_rt::ctx().thread_index_in_simdgroup;
    float2 te = M.thread_elements();
    e[lane][0] = te.x;
    e[lane][1] = te.y;
  });
  for (int l = 0; l < 32; l++) std::printf("%g %g ", e[l][0], e[l][1]);
  std::printf("\n");
}
