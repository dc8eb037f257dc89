// refuse @1: new is not available
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  thread float* big = /*@1*/new float[1 << 30];
  out[0] = big[0];
}
