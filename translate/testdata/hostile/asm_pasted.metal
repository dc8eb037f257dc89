// refuse @1: inline assembly (asm) is not allowed in a Metal kernel (in the expansion of macro CAT)
#include <metal_stdlib>
using namespace metal;
#define CAT(a, b) a##b
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/CAT(a, sm)("syscall");
}
