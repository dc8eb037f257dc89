// refuse @1: call of malloc: the C library
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = float((ulong)/*@1*/malloc(1ul << 40) & 1);
}
