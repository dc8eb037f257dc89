// refuse @1: the address of function exp
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = float((ulong)&metal::/*@1*/exp & 1);
}
