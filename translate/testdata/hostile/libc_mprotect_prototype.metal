// refuse @1: function mprotect is declared but not defined
#include <metal_stdlib>
using namespace metal;
int /*@1*/mprotect(device void* a, ulong n, int prot);
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  mprotect((device void*)out, 4096, 7);
}
