// refuse @1: whose type (auto) vetting cannot see
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  auto l = [&]() { return out[0]; };
  (/*@1*/(thread ulong*)&l)[0] = addr;
  out[1] = l();
}
