// refuse @1: #pragma GCC optimize
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/_Pragma("GCC optimize(\"O0\")")
  out[0] = 0;
}
