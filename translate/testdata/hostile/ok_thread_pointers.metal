// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* o [[buffer(0)]]) {
  float local[8] = {};
  thread float* t = &local[0];
  thread float4* t4 = (thread float4*)t;
  thread uchar* bytes = (thread uchar*)&local;
  o[0] = t4[1].x + float(bytes[0]);
}
