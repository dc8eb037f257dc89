// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* o [[buffer(0)]], constant uint& n [[buffer(1)]]) {
  bool a = n > 1 && n < 9;
  uint b = n & 3;
  o[0] = (a && b) ? 1.0f : float(+b);
}
