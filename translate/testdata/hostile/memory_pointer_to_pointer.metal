// refuse @1: pointer to pointers
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], device ulong* scratch [[buffer(1)]], constant ulong& addr [[buffer(2)]]) {
  scratch[0] = addr;
  device float* p = (/*@1*/reinterpret_cast<device float* device*>(scratch))[0];
  p[0] = 1;
}
