#include <metal_stdlib>
using namespace metal;

// stage_vec passes a float4 through threadgroup memory declared in a helper.
float4 stage_vec(float4 x, uint tid)
{
    threadgroup float4 v[2];
    if (tid < 2) {
        v[tid] = x;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return v[0] + v[1];
}

// stage_bytes sums five chars written by the first five threads.
uint stage_bytes(uint tid)
{
    threadgroup char c[5];
    if (tid < 5) {
        c[tid] = char(tid * 3);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return uint(c[0] + c[1] + c[2] + c[3] + c[4]);
}

// helpers combines threadgroup memory of its own (6 bytes of half) with its
// helpers' (float4s aligned to 16, then 5 chars): laid out kernel first, the
// total is 64 bytes; helpers first it would be 48.
kernel void helpers(device const float4* in [[buffer(0)]],
                    device float4* out [[buffer(1)]],
                    uint tid [[thread_index_in_threadgroup]],
                    uint gid [[thread_position_in_grid]],
                    uint tg [[threadgroup_position_in_grid]])
{
    threadgroup half h[3];
    if (tid < 3) {
        h[tid] = half(tid) + 0.5h;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float4 s = stage_vec(in[gid], tid);
    uint b = stage_bytes(tid);
    out[gid] = s + float(h[0] + h[1] + h[2]) + float(b);
}
