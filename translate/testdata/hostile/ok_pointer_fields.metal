// admit
#include <metal_stdlib>
using namespace metal;
struct Args { device float* dst; device const float* src; };
kernel void k(constant Args& a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  device float4* d = (device float4*)a.dst;
  device const float4* s = (device const float4*)(a.src + 4 * i);
  d[i] = s[0];
}
