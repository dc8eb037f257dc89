// refuse @1: as_type of a pointer
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = float(/*@1*/as_type<ulong>(out) & 0xfff);
}
