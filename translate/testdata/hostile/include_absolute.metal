// refuse @1: absolute include paths are not allowed
#include <metal_stdlib>
using namespace metal;
/*@1*/#include "/etc/passwd"
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {}
