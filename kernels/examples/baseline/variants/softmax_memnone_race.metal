// variant: the barrier between publishing and reading the max dropped: a new race.
// softmax_memnone.metal: a softmax, one row per threadgroup, whose two
// reductions (the row's max, then its sum) share one threadgroup scratch
// array. Between them, the only thing that keeps simd group 0 from
// clearing the scratch while other simd groups still read the max from it
// is a threadgroup_barrier(mem_flags::mem_none): an execution barrier,
// which Metal does not promise orders threadgroup memory. Projects ship
// kernels guarded this way; the checking mode names the pair of accesses
// mem-none-order, and check takes the baseline with it as a baseline
// finding (see docs/checking.md).
#include <metal_stdlib>
using namespace metal;

kernel void softmax_memnone(device const float *x [[buffer(0)]],
                            device float *y       [[buffer(1)]],
                            constant uint &n      [[buffer(2)]],
                            uint row              [[threadgroup_position_in_grid]],
                            uint lid              [[thread_position_in_threadgroup]],
                            uint lsize            [[threads_per_threadgroup]],
                            uint sg               [[simdgroup_index_in_threadgroup]],
                            uint lane             [[thread_index_in_simdgroup]])
{
    threadgroup float scratch[32];
    device const float *in = x + row * n;
    device float *out = y + row * n;

    float m = -INFINITY;
    for (uint i = lid; i < n; i += lsize) {
        m = max(m, in[i]);
    }
    m = simd_max(m);
    if (sg == 0) {
        scratch[lane] = -INFINITY;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0) {
        scratch[sg] = m;
    }
    m = simd_max(scratch[lane]);

    threadgroup_barrier(mem_flags::mem_none);

    float s = 0.0f;
    for (uint i = lid; i < n; i += lsize) {
        s += exp(in[i] - m);
    }
    s = simd_sum(s);
    if (sg == 0) {
        scratch[lane] = 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0) {
        scratch[sg] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s = simd_sum(scratch[lane]);

    for (uint i = lid; i < n; i += lsize) {
        out[i] = exp(in[i] - m) / s;
    }
}
