// refuse @1: a union with a pointer member
#include <metal_stdlib>
using namespace metal;
struct Holder { device float* p; };
/*@1*/union Pun { ulong u; Holder h; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  Pun x;
  x.u = addr;
  x.h.p[0] = 1;
}
