// refuse @1: from the threadgroup address space to the device address space
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  threadgroup float tg[64];
  tg[i % 64] = 1;
  device float* d = /*@1*/(device float*)(&tg[i % 64]);
  out[i] = d[0];
}
