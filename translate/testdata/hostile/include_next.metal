// refuse @1: #include_next is not allowed
#include <metal_stdlib>
using namespace metal;
/*@1*/#include_next <stdio.h>
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {}
