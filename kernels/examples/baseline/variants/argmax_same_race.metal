// variant: the barrier before every thread reads slot 0 dropped: a new race.
// argmax_same.metal: the index of each row's largest element, one row per
// threadgroup. Each simd group reduces its lanes' candidates, lane 0
// publishes the simd group's pair, simd group 0 combines the pairs into
// slot 0, and then every thread of the threadgroup stores the row's index
// to the row's one output element. The stores of different simd groups
// are not ordered, but they store the same bytes: the checking mode names
// them same-value-write, and check takes the baseline with them as a
// baseline finding (see docs/checking.md).
#include <metal_stdlib>
using namespace metal;

kernel void argmax_same(device const float *x [[buffer(0)]],
                        device int *idx       [[buffer(1)]],
                        constant uint &n      [[buffer(2)]],
                        uint row              [[threadgroup_position_in_grid]],
                        uint lid              [[thread_position_in_threadgroup]],
                        uint lsize            [[threads_per_threadgroup]],
                        uint sg               [[simdgroup_index_in_threadgroup]],
                        uint lane             [[thread_index_in_simdgroup]],
                        uint nsg              [[simdgroups_per_threadgroup]])
{
    threadgroup float best[32];
    threadgroup int where[32];
    device const float *in = x + row * n;

    float v = -INFINITY;
    int at = -1;
    for (uint i = lid; i < n; i += lsize) {
        if (in[i] > v) {
            v = in[i];
            at = int(i);
        }
    }
    float m = simd_max(v);
    int a = simd_min(v == m ? at : INT_MAX);
    if (lane == 0) {
        best[sg] = m;
        where[sg] = a;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float bm = lane < nsg ? best[lane] : -INFINITY;
        int ba = lane < nsg ? where[lane] : INT_MAX;
        float mm = simd_max(bm);
        int aa = simd_min(bm == mm ? ba : INT_MAX);
        if (lane == 0) {
            where[0] = aa;
        }
    }
    idx[row] = where[0];
}
