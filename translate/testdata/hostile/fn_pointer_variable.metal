// refuse @1: function pointer type
// refuse @2: the address of function helper
#include <metal_stdlib>
using namespace metal;
float helper(float x) { return x; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  float /*@1*/(*fp)(float) = /*@2*/helper;
  out[0] = fp(1);
}
