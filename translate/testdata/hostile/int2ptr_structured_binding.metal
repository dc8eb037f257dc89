// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
struct W { ulong v; };
kernel void k(device float* q [[buffer(0)]], constant ulong& addr [[buffer(1)]]) {
  {
    auto [q] = W{addr};
    (/*@1*/(device float*)q)[0] = 1;
  }
}
