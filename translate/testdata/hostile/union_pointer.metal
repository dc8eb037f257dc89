// refuse @1: a union with a pointer member
#include <metal_stdlib>
using namespace metal;
/*@1*/union Pun { ulong u; device float* p; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  Pun x;
  x.u = addr;
  x.p[0] = 1;
}
