// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
void f(device float* q) { q[0] = 0; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  for (ulong a = 0, q = addr; a < 1; a++) {
    device float* p = /*@1*/(device float*)q;
    p[0] = 1;
  }
}
