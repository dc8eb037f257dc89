// admit
#include <metal_stdlib>
using namespace metal;
constant int N = 8;
enum { M = 4 };
template <int K> float sum(thread const float* v) { float s = 0; for (int j = 0; j < K; j++) s += v[j]; return s; }
kernel void k(device float* o [[buffer(0)]]) {
  constexpr int L = 2;
  const int C = 3;
  float a[N], b[M * 2], c[L], d[C], e[sizeof(float4)];
  threadgroup float tg[N * M];
  a[0] = b[0] = c[0] = d[0] = e[0] = tg[0] = 1;
  o[0] = sum<2>(a) + b[0] + c[0] + d[0] + e[0];
}
