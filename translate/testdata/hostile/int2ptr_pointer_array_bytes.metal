// refuse @1: which holds pointers
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  device float* ptrs[2] = {out, out};
  thread ulong* w = /*@1*/reinterpret_cast<thread ulong*>(ptrs);
  w[1] = addr;
  ptrs[1][0] = 1;
}
