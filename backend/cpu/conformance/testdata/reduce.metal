#include <metal_stdlib>
using namespace metal;

// tg_reduce sums 256 floats per threadgroup with a tree through threadgroup
// memory, one barrier per level.
kernel void tg_reduce(device const float* in [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      uint tid [[thread_index_in_threadgroup]],
                      uint gid [[thread_position_in_grid]],
                      uint tg [[threadgroup_position_in_grid]],
                      uint n [[threads_per_threadgroup]])
{
    threadgroup float partial[256];
    partial[tid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = n / 2; s > 0; s >>= 1) {
        if (tid < s) {
            partial[tid] += partial[tid + s];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (tid == 0) {
        out[tg] = partial[0];
    }
}
