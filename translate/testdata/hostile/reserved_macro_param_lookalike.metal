// refuse 6:1: the reserved identifier __secret is not allowed
// refuse 8:15: the reserved identifier __y is not allowed
#include <metal_stdlib>
using namespace metal;
// Only a macro's own parameters may be reserved names.
#define G(__a) __a + __secret
#define H(__a) __a
int f() { int __y = 1; return H(__y); }
kernel void k(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = f();
}
