// refuse @1: as_type to a pointer type (or a type holding pointers)
#include <metal_stdlib>
using namespace metal;
struct Holder { device float* p; };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  Holder h = /*@1*/as_type<Holder>(addr);
  h.p[0] = 1;
}
