// refuse @1: function pointer type
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  ((long /*@1*/(*)(int, const thread void*, ulong))addr)(1, "x", 1);
}
