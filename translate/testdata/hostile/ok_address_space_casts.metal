// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* p [[buffer(0)]], device const char* src0 [[buffer(1)]], constant ulong& off [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  threadgroup half buf[64];
  device float4* v = (device float4*)p;
  threadgroup half2* h = (threadgroup half2*)buf;
  device const float* x = (device const float*)(src0 + off * i);
  device const float4* y = (device const float4*)((device const char*)src0 + off);
  const device int* z = ((const device int*)src0) + i;
  h[0] = half2(1);
  v[i] = float4(x[0] + y[0].x + float(z[0]) + float(buf[0]));
}
