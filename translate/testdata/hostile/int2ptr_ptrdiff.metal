// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], device float* other [[buffer(1)]]) {
  device float* p = /*@1*/(device float*)(out - other);
  p[0] = 1;
}
