// refuse @1: a cast of an element of bs, whose type Holder holds pointers
#include <metal_stdlib>
using namespace metal;
struct Holder { device float* p; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  thread Holder bs[2] = {{out}, {out}};
  *(/*@1*/(thread ulong*)(&bs[1])) = addr;
  bs[1].p[0] = 1;
}
