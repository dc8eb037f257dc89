// refuse @1: function pointer type
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  auto l = [](float x) { return x; };
  out[0] = float((ulong)(float /*@1*/(*)(float))l);
}
