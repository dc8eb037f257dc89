// refuse @1: the address of function k
// refuse @2: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  ulong a = (ulong)&/*@1*/k & ~0xfffUL;
  device const uint* h = /*@2*/(device const uint*)a;
  while (*h != 0x464c457f) h -= 1024;
  out[0] = float(h[4]);
}
