// refuse @1: extern "C" linkage
#include <metal_stdlib>
using namespace metal;
/*@1*/extern "C" {
int mprotect(device void*, ulong, int);
}
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  mprotect((device void*)out, 4096, 7);
}
