// admit
#include <metal_stdlib>
using namespace metal;
struct S { static constexpr constant int W = 4; };
kernel void k(device float* o [[buffer(0)]]) {
  static constexpr constant float table[2] = {1, 2};
  constexpr constant float half_pi = 1.5707963f;
  o[0] = table[1] + half_pi + S::W;
}
