// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* p [[buffer(0)]], device const uint* in [[buffer(1)]]) {
  device const float4* f = reinterpret_cast<device const float4*>(in + 4);
  device uint* u = reinterpret_cast<device uint*>(p);
  u[0] = in[0];
  p[1] = f[0].x + reinterpret_cast<device const float*>(in)[2];
}
