// refuse @1: static local variable
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/static int calls = 0;
  calls++;
  out[i] = float(calls);
}
