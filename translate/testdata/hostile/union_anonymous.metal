// refuse @1: a union with a pointer member
#include <metal_stdlib>
using namespace metal;
struct S { /*@1*/union { ulong u; device float* p; }; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  S s;
  s.u = addr;
  s.p[0] = 1;
}
