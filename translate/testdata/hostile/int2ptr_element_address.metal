// refuse @1: a cast of an element of ptrs, which holds pointers
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  device float* ptrs[2] = {out, out};
  *(/*@1*/(thread ulong*)(&ptrs[0])) = addr;
  ptrs[0][0] = 1;
}
