// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
struct W { ulong v; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  auto [out2] = W{addr};
  auto f = [](ulong out) { return /*@1*/(device float*)out; };
  f(out2)[0] = 1;
}
