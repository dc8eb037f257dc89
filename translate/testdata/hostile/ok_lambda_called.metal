// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  auto sq = [](float x) { return x * x; };
  auto add = [&](float x) { return x + o[0]; };
  o[i] = sq(2) + add(1);
}
