// refuse @1: whose type Holder holds pointers
#include <metal_stdlib>
using namespace metal;
struct Holder { device float* p; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  Holder h{out};
  thread ulong* w = /*@1*/(thread ulong*)&h;
  w[0] = addr;
  h.p[0] = 1;
}
