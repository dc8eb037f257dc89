// refuse @1: function pointer type
#include <metal_stdlib>
using namespace metal;
using F = float /*@1*/(*)(float);
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = 0;
}
