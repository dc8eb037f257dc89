// refuse @1: pointer-to-member operator
#include <metal_stdlib>
using namespace metal;
struct S { float v; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  float S::* m = &S::v;
  S s{1};
  out[0] = s/*@1*/.*m;
}
