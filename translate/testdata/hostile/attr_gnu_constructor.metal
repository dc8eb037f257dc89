// refuse @1: attribute [[gnu::constructor]]
#include <metal_stdlib>
using namespace metal;
/*@1*/[[gnu::constructor]] void early() {}
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = 0;
}
