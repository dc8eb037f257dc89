// refuse @1: __attribute__((section))
#include <metal_stdlib>
using namespace metal;
void early() /*@1*/__attribute__((section(".init_array")));
void early() {}
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = 0;
}
