// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
struct A { ulong p; };
constant A a = {4096};
// alignas' own parentheses are no cast; a cast inside them still is one.
struct alignas(sizeof(*/*@1*/(device float*)a.p) * 4) S { float v[4]; };
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  S s{};
  out[i] = s.v[0];
}
