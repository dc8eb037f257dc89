// refuse @1: unary + on a lambda
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  auto f = /*@1*/+[](float x) { return x; };
  out[0] = f(1);
}
