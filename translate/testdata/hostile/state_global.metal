// refuse @1: program-scope variable
#include <metal_stdlib>
using namespace metal;
device float* /*@1*/saved;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = 0;
}
