// simd.cpp — reads 64 lines "f g n" (two float bit patterns and a uint),
// runs 64 threads (two simd groups) through simd and quad functions, and
// prints each lane's results as hex bit patterns. Lanes 20..31 and 52..63
// return after the first phase; the rest then run collectives with only
// their lanes participating.
#include <cstdio>
#include <metal_stdlib>
#include <vector>

#include "stub_rt.h"
using namespace metal;

int main() {
  float f[64], g[64];
  uint n[64];
  for (int i = 0; i < 64; i++) {
    uint a, b;
    if (std::scanf("%x %x %x", &a, &b, &n[i]) != 3) return 1;
    f[i] = as_type<float>(a);
    g[i] = as_type<float>(b);
  }
  std::vector<std::vector<uint>> out(64);
  mtl_test::run_threads(64, [&] {
    uint t = mtl_rt::ctx().thread_index_in_threadgroup;
    uint lane = mtl_rt::ctx().thread_index_in_simdgroup;
    float x = f[t], y = g[t];
    uint k = n[t];
    std::vector<uint>& o = out[t];
    auto put = [&](float v) { o.push_back(as_type<uint>(v)); };
    put(simd_sum(x));
    put(simd_prefix_inclusive_sum(x));
    put(simd_prefix_exclusive_sum(x));
    put(simd_product(y));
    put(simd_min(x));
    put(simd_max(x));
    put(simd_shuffle_down(x, 1));
    put(simd_shuffle_up(x, 3));
    put(simd_shuffle_xor(x, 5));
    put(simd_broadcast(x, 7));
    put(simd_shuffle_rotate_down(x, 2));
    put(quad_sum(x));
    put(quad_shuffle(x, 2));
    put(quad_prefix_exclusive_sum(x));
    o.push_back(uint(simd_sum(int(k))));
    o.push_back(simd_and(k));
    o.push_back(simd_or(k));
    o.push_back(simd_xor(k));
    o.push_back(uint(ulong(simd_ballot(x > 0))));
    o.push_back(simd_all(x > -1e30f));
    o.push_back(simd_any(x > 1e30f));
    o.push_back(simd_sum(half(y)).bits);
    float2 v2 = simd_sum(float2(x, 1.0f));
    put(v2.x);
    put(v2.y);
    put(simd_prefix_inclusive_product(y));
    o.push_back(uint(simd_max(int(k))));
    put(simd_shuffle_and_fill_down(x, y, 5));
    put(simd_shuffle_and_fill_up(x, y, 3));
    put(quad_shuffle_xor(x, 1));
    put(quad_shuffle_up(x, 1));
    put(quad_shuffle_down(x, 2));
    put(quad_shuffle_rotate_down(x, 1));
    put(quad_broadcast(x, 3));
    o.push_back(uint(ulong(quad_ballot(x > 0))));
    put(quad_prefix_inclusive_sum(x));
    put(quad_max(x));
    if (lane >= 20) return;
    put(simd_sum(x));
    o.push_back(uint(ulong(simd_active_threads_mask())));
    put(simd_broadcast_first(x));
    o.push_back(simd_is_first());
    put(simd_prefix_inclusive_sum(x));
    put(simd_shuffle_down(x, 1));
    if (lane < 2) return;
    put(simd_broadcast_first(x));
    o.push_back(simd_is_first());
  });
  for (int i = 0; i < 64; i++) {
    for (uint v : out[i]) std::printf("%x ", v);
    std::printf("\n");
  }
}
