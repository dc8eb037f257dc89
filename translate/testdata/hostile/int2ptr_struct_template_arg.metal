// refuse @1: a pointer type as a template argument
#include <metal_stdlib>
using namespace metal;
template <typename P> struct Box { P p; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  Box<device float/*@1*/*> b;
  out[0] = 0;
}
