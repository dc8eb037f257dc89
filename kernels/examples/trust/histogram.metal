// histogram.metal: zero-initialise-then-accumulate in threadgroup memory.
//
// tg_histogram counts keys into 64 bins of one threadgroup: the bins are
// cleared with plain stores, bumped with relaxed threadgroup atomics and
// read back with plain loads, the way ports of shared-memory histograms
// write it (threadgroup uint viewed as atomic_uint for the increments).
//
// col_sums gives every thread a slot of its own: each thread zeroes and
// accumulates only acc[tid], and after one barrier simd group 0 folds the
// slots into the threadgroup's result.
//
// Every threadgroup_barrier carries a `drop:` comment: what the checking
// mode must report when that barrier alone is removed (see
// check/trust_test.go).
#include <metal_stdlib>
using namespace metal;

#define NBINS 64

struct HistParams {
    uint n; // keys per threadgroup
};

kernel void tg_histogram(device const uint *keys    [[buffer(0)]],
                         device uint *hist_out      [[buffer(1)]],
                         constant HistParams &p     [[buffer(2)]],
                         uint tid                   [[thread_index_in_threadgroup]],
                         uint gid                   [[threadgroup_position_in_grid]],
                         uint ntg                   [[threads_per_threadgroup]])
{
    threadgroup uint hist[NBINS];

    for (uint b = tid; b < NBINS; b += ntg) {
        hist[b] = 0;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race|uninit (a thread bumps bin k before or while thread k, in another simd group, clears it)

    for (uint i = tid; i < p.n; i += ntg) {
        const uint k = keys[gid * p.n + i] % NBINS;
        atomic_fetch_add_explicit((threadgroup atomic_uint *) &hist[k], 1u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (thread b's plain load of bin b meets other simd groups' increments of it)

    for (uint b = tid; b < NBINS; b += ntg) {
        hist_out[gid * NBINS + b] = hist[b];
    }
}

// col_sums: out[gid] = sum of the threadgroup's ntg * per values, through
// one slot per thread.
kernel void col_sums(device const float *x      [[buffer(3)]],
                     device float *sums         [[buffer(4)]],
                     constant HistParams &p     [[buffer(2)]],
                     uint tid                   [[thread_index_in_threadgroup]],
                     uint gid                   [[threadgroup_position_in_grid]],
                     uint ntg                   [[threads_per_threadgroup]],
                     ushort sgitg               [[simdgroup_index_in_threadgroup]],
                     ushort tiisg               [[thread_index_in_simdgroup]])
{
    threadgroup float acc[256];

    acc[tid] = 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: pass (unneeded: a thread zeroes and then accumulates into its own slot acc[tid] only)

    device const float *row = x + gid * p.n;
    for (uint i = tid; i < p.n; i += ntg) {
        acc[tid] += row[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (simd group 0 reads every slot, which the threads of the other simd groups write just above)

    if (sgitg == 0) {
        float s = 0.0f;
        for (uint j = tiisg; j < ntg; j += 32) {
            s += acc[j];
        }
        s = simd_sum(s);
        if (tiisg == 0) {
            sums[gid] = s;
        }
    }
}
