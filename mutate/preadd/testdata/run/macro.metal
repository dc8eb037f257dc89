// Subscripts with macros for preadd's run test: every site preadd offers
// must keep the outputs bitwise.
#include <metal_stdlib>
using namespace metal;

#define K_TILE 128u
#define K_HALF (K_TILE / 2)
#define K_ROW (K_HALF + 2 * 32u)

kernel void kernel_macro_rows(device const float *v [[buffer(0)]], device float *out [[buffer(1)]],
                              uint tid [[thread_position_in_grid]])
{
    float acc = 0.0f;
    for (uint c = 0; c < 8; ++c) {
        acc += v[c * K_ROW + tid + K_TILE] * 0.5f;
        acc += v[c + tid * 2 + K_HALF];
    }
    out[tid] = acc;
}
