#include <metal_stdlib>
using namespace metal;

// racy reads a neighbour's threadgroup value without a barrier: its output
// depends on the order threads run in.
kernel void racy(device const uint* in [[buffer(0)]],
                 device uint* out [[buffer(1)]],
                 uint tid [[thread_index_in_threadgroup]],
                 uint gid [[thread_position_in_grid]],
                 uint n [[threads_per_threadgroup]])
{
    threadgroup uint s[128];
    s[tid] = in[gid];
    out[gid] = s[(tid + 1) % n];
}

// race_fixed is racy with the barrier it needs.
kernel void race_fixed(device const uint* in [[buffer(0)]],
                       device uint* out [[buffer(1)]],
                       uint tid [[thread_index_in_threadgroup]],
                       uint gid [[thread_position_in_grid]],
                       uint n [[threads_per_threadgroup]])
{
    threadgroup uint s[128];
    s[tid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = s[(tid + 1) % n];
}
