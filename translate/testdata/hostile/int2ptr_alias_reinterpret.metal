// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
using fptr = device float*;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/reinterpret_cast<fptr>(addr)[0] = 1;
}
