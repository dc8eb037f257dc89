// example.metal: a small threadgroup reduction used in metalab's README.
//
// Each threadgroup of 64 threads sums the squares of 4 values per thread
// into a threadgroup array, halves the array down to 8 partial sums and
// lets thread 0 add those 8 and write one result per threadgroup.
#include <metal_stdlib>
using namespace metal;

#define TG_SIZE 64
#define PER_THREAD 4

// square returns x*x; kept as a helper so it has a site list of its own.
inline float square(float x) {
    return x * x;
}

kernel void reduce(device const float *in   [[buffer(0)]],
                   device float *out        [[buffer(1)]],
                   uint tid                 [[thread_position_in_threadgroup]],
                   uint gid                 [[threadgroup_position_in_grid]])
{
    threadgroup float partial[TG_SIZE];

    float acc = 0.0f;
    for (uint k = 0; k < PER_THREAD; ++k) {
        acc += square(in[(gid * TG_SIZE + tid) * PER_THREAD + k]);
    }
    partial[tid] = acc;
    threadgroup_barrier(mem_flags::mem_threadgroup);

    for (uint stride = TG_SIZE / 2; stride >= 8; stride /= 2) {
        if (tid < stride) {
            partial[tid] += partial[tid + stride];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    if (tid == 0) {
        float total = 0.0f;
        for (int i = 0; i < 8; i++) {
            total += partial[i];
        }
        out[gid] = total;
    }
}
