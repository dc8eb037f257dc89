// variant: the row's last slot goes unwritten too: an unwritten read that reaches the output.
// scan_unwritten.metal: an inclusive prefix sum of each row of N floats
// (N at most the threadgroup size), one row per threadgroup, in the
// Hillis-Steele style over one slot a thread. Threads past the row's end
// write no slot, but the scan reads every thread's slot: the slots past N
// are read unwritten. Their sums only ever reach slots past N, which no
// thread stores: the unwritten bytes reach no output, and check takes the
// baseline with them as a baseline finding, unwritten-unused (see
// docs/checking.md).
#include <metal_stdlib>
using namespace metal;

kernel void scan_unwritten(device const float *x [[buffer(0)]],
                           device float *y       [[buffer(1)]],
                           constant uint &n      [[buffer(2)]],
                           uint row              [[threadgroup_position_in_grid]],
                           uint lid              [[thread_position_in_threadgroup]],
                           uint lsize            [[threads_per_threadgroup]])
{
    threadgroup float slot[256];
    if (lid + 1 < n) {
        slot[lid] = x[row * n + lid];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint off = 1; off < lsize; off *= 2) {
        float v = slot[lid];
        if (lid >= off) {
            v += slot[lid - off];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        slot[lid] = v;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid < n) {
        y[row * n + lid] = slot[lid];
    }
}
