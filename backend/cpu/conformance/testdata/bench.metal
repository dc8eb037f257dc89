#include <metal_stdlib>
using namespace metal;

// poly runs a fixed recurrence per element: real arithmetic per thread for
// comparing emulated with native speed.
kernel void poly(device const float* x [[buffer(0)]],
                 device float* y [[buffer(1)]],
                 uint i [[thread_position_in_grid]])
{
    float v = x[i];
    float acc = 0.0f;
    for (int k = 0; k < 64; k++) {
        acc = acc * v + 0.5f;
        v = v * 0.999f + 0.001f;
    }
    y[i] = acc;
}

// barriers8 passes 8 threadgroup barriers per thread, double-buffering a
// neighbour exchange so no barrier is missing.
kernel void barriers8(device float* out [[buffer(0)]],
                      uint tid [[thread_index_in_threadgroup]],
                      uint gid [[thread_position_in_grid]],
                      uint n [[threads_per_threadgroup]])
{
    threadgroup float s[2][256];
    float v = float(gid);
    for (uint k = 0; k < 8; k++) {
        s[k & 1][tid] = v;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        v += s[k & 1][(tid + 1) % n];
    }
    out[gid] = v;
}
