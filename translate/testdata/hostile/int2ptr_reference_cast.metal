// refuse @1: pointer to pointers
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  ulong n = addr;
  device float*& p = /*@1*/reinterpret_cast<device float* thread&>(n);
  p[0] = 1;
}
