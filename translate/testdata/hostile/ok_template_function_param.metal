// admit
#include <metal_stdlib>
using namespace metal;
template <typename T> void deq(device const T* x, thread float4& r) { r = float4(float(x[0])); }
template <typename T, void (*f)(device const T*, thread float4&)>
kernel void kk(device const void* src [[buffer(0)]], device float4* dst [[buffer(1)]]) {
  float4 r;
  f((device const T*)src, r);
  dst[0] = r;
}
template [[host_name("kk_half")]] kernel void kk<half, deq<half>>(device const void*, device float4*);
