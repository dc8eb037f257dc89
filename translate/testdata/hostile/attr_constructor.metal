// refuse @1: __attribute__((constructor))
#include <metal_stdlib>
using namespace metal;
/*@1*/__attribute__((constructor)) void early() {}
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = 0;
}
