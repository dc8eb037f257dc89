// layer_norm.metal: a two-pass layer norm, one row per threadgroup. Pass 1
// sums the row into red[] (a simd_sum per simd group, lane 0 publishes),
// every thread reads the total; pass 2 reuses red[] for the squared
// deviations from the mean. The barrier between the two passes protects
// the reads of pass 1 from the writes of pass 2 (write after read).
//
// Every threadgroup_barrier carries a `drop:` comment: what the checking
// mode must report when that barrier alone is removed (see
// check/trust_test.go).
#include <metal_stdlib>
using namespace metal;

struct LNParams {
    uint  n;   // row length
    float eps;
};

kernel void layer_norm(device const float *x     [[buffer(0)]],
                       device const float *w     [[buffer(1)]],
                       device const float *b     [[buffer(2)]],
                       device float *y           [[buffer(3)]],
                       constant LNParams &p      [[buffer(4)]],
                       uint row                  [[threadgroup_position_in_grid]],
                       uint tid                  [[thread_index_in_threadgroup]],
                       uint ntg                  [[threads_per_threadgroup]],
                       uint sgitg                [[simdgroup_index_in_threadgroup]],
                       uint tiisg                [[thread_index_in_simdgroup]],
                       uint nsg                  [[simdgroups_per_threadgroup]])
{
    threadgroup float red[8];

    device const float *xr = x + row * p.n;

    // Pass 1: the mean.
    float s = 0.0f;
    for (uint i = tid; i < p.n; i += ntg) {
        s += xr[i];
    }
    s = simd_sum(s);
    if (tiisg == 0) {
        red[sgitg] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race|uninit (every thread reads red[k], which lane 0 of simd group k writes just above, for the first time)
    float total = 0.0f;
    for (uint k = 0; k < nsg; ++k) {
        total += red[k];
    }
    const float mean = total / p.n;
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (pass 2 overwrites red[k] while the other simd groups may still read it for the mean)

    // Pass 2: the variance, about the mean.
    float v = 0.0f;
    for (uint i = tid; i < p.n; i += ntg) {
        const float d = xr[i] - mean;
        v += d * d;
    }
    v = simd_sum(v);
    if (tiisg == 0) {
        red[sgitg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (every thread reads red[k], which lane 0 of simd group k rewrites just above)
    float var = 0.0f;
    for (uint k = 0; k < nsg; ++k) {
        var += red[k];
    }
    const float rs = rsqrt(var / p.n + p.eps);

    device float *yr = y + row * p.n;
    for (uint i = tid; i < p.n; i += ntg) {
        yr[i] = (xr[i] - mean) * rs * w[i] + b[i];
    }
}
