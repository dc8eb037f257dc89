// refuse @1: the address of function get
#include <metal_stdlib>
using namespace metal;
struct S { float v; float get() const { return v; } };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  auto m = &S::/*@1*/get;
  S s{1};
  out[0] = (s.*m)();
}
