// admit
#include <metal_stdlib>
using namespace metal;
// candle's (and MLX's) steel BlockLoader::load_unsafe: the address of an
// element of a pointer or an array of scalars, cast to a vector of its
// bytes, in the address space it points into; alignas' argument is no cast.
template <typename T, short alignment = 1, short vec_size = 4>
struct Loader {
  threadgroup T* dst;
  const device T* src;
  struct alignas(alignment * sizeof(T)) ReadVector {
    uint8_t v[sizeof(T) * vec_size];
  };
  void load(int i) const {
    *((threadgroup ReadVector*)(&dst[i * vec_size])) = *((const device ReadVector*)(&src[i * vec_size]));
  }
};
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  threadgroup float tg[64];
  Loader<float> l{tg, in};
  l.load(i % 16);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float local[4] = {1, 2, 3, 4};
  thread float2* h = (thread float2*)(&local[2]);
  out[i] = tg[i % 64] + (*h).x + ((threadgroup float4*)(&tg[0]))->y;
}
