// A kernel for the sweep's tests, run by the fake backend: its markers
// plant the timings. Every dispatch takes 10ms, plus 1ms for the barrier
// (so dropping it is 9% faster), plus 3ms per copy of the loop body where
// p.c is 3 (so unrolling the loop, which copies the body, is slower at
// that case only). The outputs are the inputs, whatever the variant.
#include <metal_stdlib>
using namespace metal;

struct P { uint c; };

kernel void k(device const uchar *in [[buffer(0)]], device uchar *out [[buffer(1)]],
              constant P &p [[buffer(2)]], uint tid [[thread_position_in_threadgroup]])
{
    // fake: copy 0 1
    // fake: time 10ms
    threadgroup uchar s[64];
    s[tid] = in[tid];
    threadgroup_barrier(mem_flags::mem_threadgroup); // fake: time 1ms
    uchar acc = 0;
    for (uint j = 0; j < 2; j++) {
        acc += s[(tid + j) % 64]; // fake: time-if 2 0 3 3ms
    }
    out[tid] = acc;
}
