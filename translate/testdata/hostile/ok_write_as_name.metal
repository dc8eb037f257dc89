// admit
#include <metal_stdlib>
using namespace metal;
struct Out { device float* write; };
kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float mprotect = 1;
  Out w{o};
  w.write[i] = mprotect;
}
