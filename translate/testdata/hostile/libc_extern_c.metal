// refuse @1: extern "C" linkage
#include <metal_stdlib>
using namespace metal;
/*@1*/extern "C" long write(int, const constant char*, ulong);
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  write(1, "x", 1);
}
