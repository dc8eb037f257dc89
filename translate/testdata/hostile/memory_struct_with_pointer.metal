// refuse @1: pointer to pointers
#include <metal_stdlib>
using namespace metal;
struct Holder { device float* p; };
kernel void k(device float* out [[buffer(0)]], device ulong* scratch [[buffer(1)]], constant ulong& addr [[buffer(2)]]) {
  scratch[0] = addr;
  (/*@1*/(device Holder*)scratch)->p[0] = 1;
}
