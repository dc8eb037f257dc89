// admit
#include <metal_stdlib>
using namespace metal;
#line 100
kernel void k(device float* out [[buffer(0)]]) {
  out[0] = 1;
}
