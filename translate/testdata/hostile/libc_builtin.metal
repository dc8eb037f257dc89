// refuse @1: the compiler builtin __builtin_printf
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/__builtin_printf("pass\n");
}
