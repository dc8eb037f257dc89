#include <metal_stdlib>
using namespace metal;

// tg_param reverses each threadgroup's values through host-sized
// threadgroup memory bound at [[threadgroup(0)]].
kernel void tg_param(device const float* in [[buffer(0)]],
                     device float* out [[buffer(1)]],
                     threadgroup float* scratch [[threadgroup(0)]],
                     uint tid [[thread_index_in_threadgroup]],
                     uint n [[threads_per_threadgroup]],
                     uint gid [[thread_position_in_grid]])
{
    scratch[tid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = scratch[n - 1 - tid];
}
