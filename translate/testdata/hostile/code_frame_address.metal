// refuse @1: the compiler builtin __builtin_frame_address
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  thread ulong* fp = (thread ulong*)/*@1*/__builtin_frame_address(0);
  fp[1] = addr;
}
