#include <metal_stdlib>
using namespace metal;

// crash writes through a null pointer.
kernel void crash(device uint* out [[buffer(0)]],
                  uint gid [[thread_position_in_grid]])
{
    device uint* p = out[0] == 12345u ? out : (device uint*)0;
    p[gid] = gid;
}

// far writes far outside its buffer, past any neighbour: still a bad
// access of that buffer.
kernel void far(device uint* out [[buffer(0)]],
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

// deadlock has half the threads wait at one barrier and half at another.
kernel void deadlock(device uint* out [[buffer(0)]],
                     uint tid [[thread_index_in_threadgroup]])
{
    if (tid < 16) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
    } else {
        threadgroup_barrier(mem_flags::mem_device);
    }
    out[tid] = tid;
}

// divergent returns early from one thread; the others' barrier completes
// (returned threads count as arrived), with a warning.
kernel void divergent(device uint* out [[buffer(0)]],
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
