// refuse @1: the C library is not available
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  auto w = /*@1*/write;
  out[0] = 0;
}
