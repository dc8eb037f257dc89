// refuse @1: a cast of the address of the pointer p
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  device float* p = out;
  thread uchar* b = /*@1*/(thread uchar*)&p;
  for (int j = 0; j < 8; j++) b[j] = uchar(addr >> (8 * j));
  p[0] = 1;
}
