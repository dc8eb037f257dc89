// refuse @1: a pointer type as a template argument
#include <metal_stdlib>
using namespace metal;
template <typename P> P forge(ulong n) { return (P)n; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  forge<device float/*@1*/*>(addr)[0] = 1;
}
