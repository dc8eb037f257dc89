// refuse @1: a cast of an element of hs, whose type Holder holds pointers
#include <metal_stdlib>
using namespace metal;
struct Holder { device float* p; };
kernel void k(device Holder* hs [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  *(/*@1*/(device ulong*)(&hs[i])) = addr;
  hs[i].p[0] = 1;
}
