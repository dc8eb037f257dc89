// refuse @1: the compiler builtin __builtin_return_address
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = float((ulong)/*@1*/__builtin_return_address(0) & 1);
}
