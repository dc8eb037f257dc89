// refuse @1: thread_local
#include <metal_stdlib>
using namespace metal;
/*@1*/thread_local int seen = 0;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = seen;
}
