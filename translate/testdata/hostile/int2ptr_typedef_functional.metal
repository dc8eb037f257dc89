// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
typedef device float* fptr;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  fptr p = /*@1*/fptr(addr);
  p[0] = 1;
}
