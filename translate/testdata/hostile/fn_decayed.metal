// refuse @1: the address of function helper
#include <metal_stdlib>
using namespace metal;
float helper(float x) { return x; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  auto f = /*@1*/helper;
  out[0] = f(1);
}
