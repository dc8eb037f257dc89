// refuse @1: variable-length array
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  float big[/*@1*/addr];
  big[0] = 1;
  out[0] = big[0];
}
