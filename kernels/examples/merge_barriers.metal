// merge_barriers.metal: a two-phase threadgroup transpose whose phases
// each end with a barrier, so two barriers meet back to back where phase
// one's trailing barrier precedes phase two's leading one. metalab's
// merge-barriers makes them one; nothing else changes.
#include <metal_stdlib>
using namespace metal;

#define TILE 16

kernel void merge_barriers(device const float *in  [[buffer(0)]],
                           device float *out       [[buffer(1)]],
                           uint2 tg  [[threadgroup_position_in_grid]],
                           uint  tid [[thread_index_in_threadgroup]])
{
    threadgroup float tile[TILE][TILE + 1];
    threadgroup float row_sum[TILE];
    const uint r = tid / TILE;
    const uint c = tid % TILE;
    const uint base = (tg.x * TILE) * TILE;

    // Phase 1: stage the tile.
    tile[r][c] = in[base + r * TILE + c];
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Phase 2: sum each row, one thread per row, in column order.
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (c == 0) {
        float s = 0.0f;
        for (uint k = 0; k < TILE; ++k) {
            s += tile[r][k];
        }
        row_sum[r] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Transposed out, scaled by the row sum of the source row.
    out[base + c * TILE + r] = tile[r][c] * row_sum[r];
}
