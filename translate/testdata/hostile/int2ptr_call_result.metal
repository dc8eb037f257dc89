// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
ulong where(ulong a) { return a; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  device float* p = /*@1*/(device float*)where(addr);
  p[0] = 1;
}
