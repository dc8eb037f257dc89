// admit
#include <metal_stdlib>
using namespace metal;
template <typename T> T scale(T x, float s) { return T(float(x) * s); }
template <typename T> T load(device const T* p, uint i) { return (T)p[i]; }
kernel void k(device float* out [[buffer(0)]], device const half* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = scale(out[i], 2.0f) + float(load(in, i)) + float(scale(half(1), 0.5f));
}
