// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
#define FORGE(x) ((device float*)(x))
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/FORGE(addr)[0] = 1;
}
