// refuse @1: from the threadgroup address space to the device address space
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
  threadgroup float s[64];
  device float* d = /*@1*/(device float*)(s + i);
  d[0] = out[0];
}
