// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* o [[buffer(0)]], device const float* x [[buffer(1)]]) {
  o[0] = as_type<uint>(x[0]);
  half2 h = as_type<half2>(o[1]);
  o[2] = as_type<uint>(float(h.x)) + as_type<uint>(x[1] * 2.0f);
}
