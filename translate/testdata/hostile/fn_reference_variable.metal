// refuse @1: function reference type
#include <metal_stdlib>
using namespace metal;
float helper(float x) { return x; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  float /*@1*/(&fr)(float) = helper;
  out[0] = fr(1);
}
