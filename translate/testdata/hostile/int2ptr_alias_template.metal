// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
template <typename T> using Ptr = device T*;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/Ptr<float>(addr)[0] = 1;
}
