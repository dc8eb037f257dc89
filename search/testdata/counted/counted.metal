// A kernel for the check after timing (search's first-dispatch test): every dispatch
// counts itself in runs[tid], and the output is the input. runs is not
// reset between the dispatches of one run (a timing sample), only between
// runs.
#include <metal_stdlib>
using namespace metal;

kernel void counted(device const uchar *in [[buffer(0)]], device uchar *out [[buffer(1)]],
                    device uint *runs [[buffer(2)]], uint tid [[thread_position_in_grid]])
{
    out[tid] = in[tid];
    runs[tid] += 1u;
}
