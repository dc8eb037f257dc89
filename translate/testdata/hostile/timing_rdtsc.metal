// refuse @1: the reserved identifier __rdtsc
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = float(/*@1*/__rdtsc() & 1);
}
