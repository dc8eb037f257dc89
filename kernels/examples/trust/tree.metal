// tree.metal: the classic tree reduction in threadgroup memory. Each
// threadgroup of 256 threads (8 simd groups) sums one row of n floats:
// every thread accumulates a strided part of the row in four private
// accumulators, publishes their sum in partial[tid], and the array is
// halved until partial[0] holds the row's sum.
//
// Every threadgroup_barrier carries a `drop:` comment: what the checking
// mode must report when that barrier alone is removed (see
// check/trust_test.go).
#include <metal_stdlib>
using namespace metal;

#define TG 256

struct TreeParams {
    uint n; // row length
};

kernel void tree_sum(device const float *x       [[buffer(0)]],
                     device float *out           [[buffer(1)]],
                     constant TreeParams &p      [[buffer(2)]],
                     uint tid                    [[thread_index_in_threadgroup]],
                     uint gid                    [[threadgroup_position_in_grid]])
{
    threadgroup float partial[TG];

    // Four accumulators a thread, for the adds to overlap.
    device const float *row = x + gid * p.n;
    float acc4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint i = tid, k = 0; i < p.n; i += TG, ++k) {
        acc4[k % 4] += row[i];
    }
    const float acc = (acc4[0] + acc4[1]) + (acc4[2] + acc4[3]);
    partial[tid] = acc;
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race|uninit (at s = 128, thread tid reads partial[tid + 128], which thread tid + 128, four simd groups on, writes just above; whether it has yet is up to the schedule)

    for (uint s = TG / 2; s > 0; s >>= 1) {
        if (tid < s) {
            partial[tid] += partial[tid + s];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (step s/2 reads partial[tid + s/2], which step s wrote from another simd group while s/2 >= 32)
    }

    if (tid == 0) {
        out[gid] = partial[0];
    }
}
