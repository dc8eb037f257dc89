// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* s [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  {
    float s = 2;
    (void)s;
  }
  device float4* v = (device float4*)s;
  threadgroup float t[64];
  ((threadgroup float4*)t)[i] = v[i];
}
kernel void k2(device float* o [[buffer(0)]]) { float t = 1; o[0] = t; }
