// refuse @1: extern declarations are not allowed
#include <metal_stdlib>
using namespace metal;
/*@1*/extern constant uchar __executable_start[];
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = __executable_start[0];
}
