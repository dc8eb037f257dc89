#include <metal_stdlib>
using namespace metal;

// atomics updates device counters from every thread and threadgroup
// counters from the threads of one group.
kernel void atomics(device atomic_uint* counters [[buffer(0)]],
                    device uint* out [[buffer(1)]],
                    device const uint* in [[buffer(2)]],
                    uint gid [[thread_position_in_grid]],
                    uint tid [[thread_index_in_threadgroup]],
                    uint tg [[threadgroup_position_in_grid]])
{
    threadgroup atomic_uint local_sum;
    threadgroup atomic_uint local_max;
    if (tid == 0) {
        atomic_store_explicit(&local_sum, 0u, memory_order_relaxed);
        atomic_store_explicit(&local_max, 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint v = in[gid];
    atomic_fetch_add_explicit(&local_sum, v, memory_order_relaxed);
    atomic_fetch_max_explicit(&local_max, v, memory_order_relaxed);
    atomic_fetch_add_explicit(&counters[0], 1u, memory_order_relaxed);
    atomic_fetch_xor_explicit(&counters[1], v, memory_order_relaxed);
    atomic_fetch_min_explicit(&counters[2], v, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        out[tg * 2 + 0] = atomic_load_explicit(&local_sum, memory_order_relaxed);
        out[tg * 2 + 1] = atomic_load_explicit(&local_max, memory_order_relaxed);
    }
}
