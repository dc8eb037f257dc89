// admit
#include <metal_stdlib>
using namespace metal;
float helper(float x);
struct P { float v; float get() const { return v; } static float twice(float x) { return 2 * x; } };
kernel void k(device float* o [[buffer(0)]]) {
  P p{1};
  o[0] = helper(1) + p.get() + P::twice(2) + metal::exp(0.0f) + exp(0.0f);
}
float helper(float x) { return x; }
