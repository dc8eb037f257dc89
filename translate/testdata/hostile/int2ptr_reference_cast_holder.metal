// refuse @1: pointer to pointers (or to Holder
#include <metal_stdlib>
using namespace metal;
struct Holder { device float* p; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  ulong n = addr;
  (/*@1*/(thread Holder&)n).p[0] = 1;
}
