// corpus_branch.metal: kernels in the style of ggml's soft_max and norms,
// for the barrier proofs' property test: the cross-SIMD-group reduction
// runs in the branch of if (ntg > 32), whose barriers are judged with the
// code around the if; MAX is a macro computing a value. kernel_branch_max
// writes each thread's own element before the branch, a barrier the
// proofs remove; kernel_branch_sum reduces twice through one buffer, as
// soft_max does, each barrier needed.
#include <metal_stdlib>
using namespace metal;

#define MAX(x, y) ((x) > (y) ? (x) : (y))

kernel void kernel_branch_max(device const float *src [[buffer(0)]],
                              device float *dst [[buffer(1)]],
                              constant int &ne00 [[buffer(2)]],
                              threadgroup float *buf [[threadgroup(0)]],
                              uint tgpig [[threadgroup_position_in_grid]],
                              ushort tpitg [[thread_index_in_threadgroup]],
                              ushort sgitg [[simdgroup_index_in_threadgroup]],
                              ushort tiisg [[thread_index_in_simdgroup]],
                              ushort ntg [[threads_per_threadgroup]])
{
    threadgroup float own[1024];
    device const float *x = src + tgpig * ne00;
    float lmax = -INFINITY;
    for (int i = tpitg; i < ne00; i += ntg) {
        lmax = MAX(lmax, x[i]);
    }
    own[tpitg] = lmax;
    float max_val = simd_max(lmax);
    if (ntg > 32) {
        float w = max_val;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (tiisg == 0) {
            buf[sgitg] = w;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        max_val = buf[tiisg < ntg / 32 ? tiisg : 0];
        max_val = simd_max(max_val);
    }
    for (int i = tpitg; i < ne00; i += ntg) {
        dst[tgpig * ne00 + i] = x[i] - max_val + own[tpitg];
    }
}

kernel void kernel_branch_sum(device const float *src [[buffer(0)]],
                              device float *dst [[buffer(1)]],
                              constant int &ne00 [[buffer(2)]],
                              threadgroup float *buf [[threadgroup(0)]],
                              uint tgpig [[threadgroup_position_in_grid]],
                              ushort tpitg [[thread_index_in_threadgroup]],
                              ushort sgitg [[simdgroup_index_in_threadgroup]],
                              ushort tiisg [[thread_index_in_simdgroup]],
                              ushort ntg [[threads_per_threadgroup]])
{
    device const float *x = src + tgpig * ne00;
    float lsum = 0.0f;
    for (int i = tpitg; i < ne00; i += ntg) {
        lsum += x[i];
    }
    float sum = simd_sum(lsum);
    if (ntg > 32) {
        if (sgitg == 0) {
            buf[tiisg] = 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (tiisg == 0) {
            buf[sgitg] = sum;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        sum = buf[tiisg];
        sum = simd_sum(sum);
    }
    float sq = 0.0f;
    for (int i = tpitg; i < ne00; i += ntg) {
        sq += (x[i] - sum) * (x[i] - sum);
    }
    sq = simd_sum(sq);
    if (ntg > 32) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (tiisg == 0) {
            buf[sgitg] = sq;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        sq = buf[tiisg];
        sq = simd_sum(sq);
    }
    for (int i = tpitg; i < ne00; i += ntg) {
        dst[tgpig * ne00 + i] = (x[i] - sum) / (sq + 1.0f);
    }
}
