// refuse @1: from the constant address space to the device address space
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]]) {
  device const uchar* code = /*@1*/(device const uchar*)"x" - 4096;
  out[0] = code[0];
}
