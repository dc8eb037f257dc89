#include <metal_stdlib>
using namespace metal;

// crash writes far outside any buffer.
kernel void crash(device uint* out [[buffer(0)]],
                  uint gid [[thread_position_in_grid]])
{
    out[ulong(gid + 1) << 36] = gid;
}

// hang spins on a flag nobody sets.
kernel void hang(device atomic_uint* flag [[buffer(0)]],
                 uint gid [[thread_position_in_grid]])
{
    while (atomic_load_explicit(flag, memory_order_relaxed) == 0u) {
    }
}

// deadlock returns early from one thread, so the barrier never fills.
kernel void deadlock(device uint* out [[buffer(0)]],
                     uint tid [[thread_index_in_threadgroup]])
{
    if (tid == 0) {
        return;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = tid;
}

// oob writes one element past the end of its buffer from the last thread.
kernel void oob(device uint* out [[buffer(0)]],
                uint gid [[thread_position_in_grid]])
{
    out[gid + 1] = gid;
}
