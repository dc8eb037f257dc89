#include <metal_stdlib>
using namespace metal;

// scale_t rotates a tile of N values through threadgroup memory; it is
// exported only through host_name instantiations.
template <typename T, uint N>
kernel void scale_t(device const T* in [[buffer(0)]],
                    device T* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]],
                    uint tid [[thread_index_in_threadgroup]])
{
    threadgroup T tile[N];
    tile[tid] = in[i] * T(N);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = tile[(tid + 1) % N] + in[i];
}

template [[host_name("scale_f32x64")]] [[kernel]] void scale_t<float, 64>(device const float*, device float*, uint, uint);
template [[host_name("scale_i32x32")]] kernel decltype(scale_t<int, 32>) scale_t<int, 32>;
