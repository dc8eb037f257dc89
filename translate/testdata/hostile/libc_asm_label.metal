// refuse @1: inline assembly
#include <metal_stdlib>
using namespace metal;
int sys(int, ulong, ulong, int) /*@1*/asm("mprotect");
int sys(int a, ulong b, ulong c, int d) { return 0; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = 0;
}
