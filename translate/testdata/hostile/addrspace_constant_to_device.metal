// refuse @1: from the constant address space to the device address space
#include <metal_stdlib>
using namespace metal;
constant float table[4] = {1, 2, 3, 4};
kernel void k(device float* out [[buffer(0)]], constant float* c [[buffer(1)]]) {
  device float* w = /*@1*/(device float*)c;
  w[0] = table[0];
}
