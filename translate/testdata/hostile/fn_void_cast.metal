// refuse @1: the address of function helper
// refuse @2: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
float helper(float x) { return x; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = *((device const uchar*)/*@2*/(device void*)/*@1*/helper);
}
