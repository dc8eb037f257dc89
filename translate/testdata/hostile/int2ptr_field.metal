// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
struct A { ulong p; };
struct B { device float* p; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  A a{addr};
  device float* p = /*@1*/(device float*)a.p;
  p[0] = 1;
}
