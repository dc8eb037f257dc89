// softmax.metal: an online softmax written the way MLX and llama.cpp write
// it, one row per threadgroup. Each thread keeps a running max and a sum
// rescaled to it; each simd group combines its lanes with simd_max and
// simd_sum; lane 0 publishes the simd group's pair in local_max[] and
// local_sum[]; simd group 0 combines the pairs and publishes the row's
// max and sum in slot 0 for every thread to read.
//
// Every threadgroup_barrier carries a `drop:` comment: what the checking
// mode must report when that barrier alone is removed (see
// check/trust_test.go).
#include <metal_stdlib>
using namespace metal;

#define SIMD_SIZE 32

struct SoftmaxParams {
    uint n; // row length, at least the threadgroup size
};

kernel void softmax_online(device const float *x      [[buffer(0)]],
                           device float *y            [[buffer(1)]],
                           constant SoftmaxParams &p  [[buffer(2)]],
                           uint row                   [[threadgroup_position_in_grid]],
                           uint lid                   [[thread_position_in_threadgroup]],
                           uint lsize                 [[threads_per_threadgroup]],
                           uint simd_group_id         [[simdgroup_index_in_threadgroup]],
                           uint simd_lane_id          [[thread_index_in_simdgroup]],
                           uint simd_groups           [[simdgroups_per_threadgroup]])
{
    threadgroup float local_max[SIMD_SIZE];
    threadgroup float local_sum[SIMD_SIZE];

    device const float *in = x + row * p.n;

    // The thread's running max and the sum of exp(v - max) over its part.
    float maxval = -INFINITY;
    float normalizer = 0.0f;
    for (uint i = lid; i < p.n; i += lsize) {
        const float v = in[i];
        const float m = max(maxval, v);
        normalizer = normalizer * exp(maxval - m) + exp(v - m);
        maxval = m;
    }

    // The simd group's pair.
    const float sg_max = simd_max(maxval);
    normalizer = simd_sum(normalizer * exp(maxval - sg_max));
    if (simd_lane_id == 0) {
        local_max[simd_group_id] = sg_max;
        local_sum[simd_group_id] = normalizer;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race|uninit (simd group 0 reads every simd group's pair, published just above for the first time)

    // The row's pair, by simd group 0.
    if (simd_group_id == 0) {
        const float m = simd_lane_id < simd_groups ? local_max[simd_lane_id] : -INFINITY;
        const float row_max = simd_max(m);
        const float s = simd_lane_id < simd_groups ? local_sum[simd_lane_id] * exp(m - row_max) : 0.0f;
        const float row_sum = simd_sum(s);
        if (simd_lane_id == 0) {
            local_max[0] = row_max;
            local_sum[0] = row_sum;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (every simd group reads slot 0, which lane 0 of simd group 0 rewrites just above)

    const float row_max = local_max[0];
    const float inv = 1.0f / local_sum[0];
    device float *out = y + row * p.n;
    for (uint i = lid; i < p.n; i += lsize) {
        out[i] = exp(in[i] - row_max) * inv;
    }
}
