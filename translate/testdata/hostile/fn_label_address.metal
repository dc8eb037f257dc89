// refuse @1: takes a label's address
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
here:
  out[0] = float((ulong)/*@1*/&&here & 1);
}
