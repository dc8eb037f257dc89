// refuse @1: #pragma GCC push_options
#include <metal_stdlib>
using namespace metal;
#define P(x) _Pragma(#x)
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/P(GCC push_options)
  out[0] = 0;
}
