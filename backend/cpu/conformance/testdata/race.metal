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

// race_mem_none has a barrier that orders no memory: an execution barrier
// only, so the neighbour's value is still a race.
kernel void race_mem_none(device const uint* in [[buffer(0)]],
                          device uint* out [[buffer(1)]],
                          uint tid [[thread_index_in_threadgroup]],
                          uint gid [[thread_position_in_grid]],
                          uint n [[threads_per_threadgroup]])
{
    threadgroup uint s[128];
    s[tid] = in[gid];
    threadgroup_barrier(mem_flags::mem_none);
    out[gid] = s[(tid + 1) % n];
}

// race_collective: simd group 0 zeroes the partial sums, then (with the
// barrier that should follow missing) every simd group's lane 0 stores its
// sum: a simd_sum between the two stores orders nothing across simd groups.
kernel void race_collective(device const uint* in [[buffer(0)]],
                            device uint* out [[buffer(1)]],
                            uint tid [[thread_index_in_threadgroup]],
                            uint gid [[thread_position_in_grid]],
                            uint sg [[simdgroup_index_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]])
{
    threadgroup uint shmem[32];
    if (sg == 0) {
        shmem[lane] = 0;
    }
    uint sum = simd_sum(in[gid]);
    if (lane == 0) {
        shmem[sg] = sum;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = shmem[tid % 4];
}

// simd_slices: each simd group works on its own slice of threadgroup
// memory and synchronises its lanes with simdgroup_barrier: correct, with
// no threadgroup barrier at all.
kernel void simd_slices(device const uint* in [[buffer(0)]],
                        device uint* out [[buffer(1)]],
                        uint tid [[thread_index_in_threadgroup]],
                        uint gid [[thread_position_in_grid]],
                        uint sg [[simdgroup_index_in_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]])
{
    threadgroup uint s[128];
    s[tid] = in[gid];
    simdgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = s[sg * 32 + (lane + 1) % 32];
}

// lockstep: lanes of one simd group read each other's value with no simd
// synchronisation between: correct only if the lanes run in lockstep.
kernel void lockstep(device const uint* in [[buffer(0)]],
                     device uint* out [[buffer(1)]],
                     uint tid [[thread_index_in_threadgroup]],
                     uint gid [[thread_position_in_grid]],
                     uint sg [[simdgroup_index_in_threadgroup]],
                     uint lane [[thread_index_in_simdgroup]])
{
    threadgroup uint s[128];
    s[tid] = in[gid];
    out[gid] = s[sg * 32 + (lane + 1) % 32];
}
