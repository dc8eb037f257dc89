// matrix.cpp — reads three 8x8 float matrices A, B, C (bit patterns) and,
// on one simd group of 32 threads, prints A*B, A*B+C, the same in half,
// mixed precision, an in-place product, a product after writes through
// thread_elements(), loads and stores at origins with strides and
// transposition, filled and diagonal matrices, each lane's
// thread_elements, and (A*B)*C by operator*.
#include <cstdio>
#include <metal_stdlib>

#include "stub_rt.h"
using namespace metal;

static float a[64], b[64], c[64], inplace[64];
static half ah[64], bh[64], ch[64];
static float res[10][64];
static half hres[64];
static float big[256], dst[256], te[64];

int main() {
  for (float* m : {a, b, c})
    for (int i = 0; i < 64; i++) {
      uint x;
      if (std::scanf("%x", &x) != 1) return 1;
      m[i] = as_type<float>(x);
    }
  for (int i = 0; i < 64; i++) ah[i] = a[i], bh[i] = b[i], ch[i] = c[i], inplace[i] = c[i];
  for (int i = 0; i < 256; i++) big[i] = float(i);
  mtl_test::run_threads(32, [&] {
    uint lane = mtl_rt::ctx().thread_index_in_simdgroup;
    simdgroup_float8x8 A, B, C, D;
    simdgroup_load(A, a);
    simdgroup_load(B, b);
    simdgroup_load(C, c);
    simdgroup_multiply(D, A, B);
    simdgroup_store(D, res[0]);
    simdgroup_multiply_accumulate(D, A, B, C);
    simdgroup_store(D, res[1]);
    simdgroup_half8x8 Ah, Bh, Ch, Dh;
    simdgroup_load(Ah, ah);
    simdgroup_load(Bh, bh);
    simdgroup_load(Ch, ch);
    simdgroup_multiply_accumulate(Dh, Ah, Bh, Ch);
    simdgroup_store(Dh, hres);
    // Mixed precision: half operands accumulate into a float matrix.
    simdgroup_float8x8 Dm;
    simdgroup_multiply_accumulate(Dm, Ah, Bh, C);
    simdgroup_store(Dm, res[2]);
    // In place in memory: every lane loads before any lane stores.
    simdgroup_float8x8 P;
    simdgroup_load(P, inplace);
    simdgroup_multiply_accumulate(P, A, B, P);
    simdgroup_store(P, inplace);
    // In place in registers: the destination aliases an operand.
    simdgroup_float8x8 Q = A;
    simdgroup_multiply(Q, Q, B);
    simdgroup_store(Q, res[3]);
    // Writes through thread_elements() take part in the next product.
    simdgroup_float8x8 S = A;
    S.thread_elements() *= float(lane + 1);
    simdgroup_multiply(D, S, B);
    simdgroup_store(D, res[4]);
    simdgroup_float8x8 L, T;
    simdgroup_load(L, big, 16, ulong2(3, 5));
    simdgroup_store(L, res[5]);
    simdgroup_load(T, big, 16, ulong2(2, 1), true);
    simdgroup_store(T, res[6]);
    simdgroup_store(L, dst, 16, ulong2(4, 6), true);
    simdgroup_store(make_filled_simdgroup_matrix<float, 8, 8>(2.5f), res[7]);
    simdgroup_store(simdgroup_float8x8(3.0f), res[8]);
    simdgroup_float8x8 M;
    simdgroup_load(M, big, 8);
    float2 e = M.thread_elements();
    te[2 * lane] = e.x;
    te[2 * lane + 1] = e.y;
    // operator*, as MLX's Winograd transforms write (G * g) * Gt.
    simdgroup_store((A * B) * C, res[9]);
  });
  auto hex = [](const float* m) {
    for (int i = 0; i < 64; i++) std::printf("%x ", as_type<uint>(m[i]));
    std::printf("\n");
  };
  hex(res[0]);
  hex(res[1]);
  for (int i = 0; i < 64; i++) std::printf("%x ", uint(as_type<ushort>(hres[i])));
  std::printf("\n");
  hex(res[2]);
  hex(inplace);
  hex(res[3]);
  hex(res[4]);
  hex(res[5]);
  hex(res[6]);
  for (int i = 0; i < 256; i++) std::printf("%g ", dst[i]);
  std::printf("\n");
  hex(res[7]);
  hex(res[8]);
  for (int i = 0; i < 64; i++) std::printf("%g ", te[i]);
  std::printf("\n");
  hex(res[9]);
}
