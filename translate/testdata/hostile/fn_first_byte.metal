// refuse @1: the address of function helper
#include <metal_stdlib>
using namespace metal;
float helper(float x) { return x * 2; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  uchar b = *(device const uchar*)&/*@1*/helper;
  out[i] = b == 0xf3 ? helper(1) : 0;
}
