#include <metal_stdlib>
using namespace metal;

// simdgroup_event and its async_copy as metal-flash-attention's kernels
// call them.

// async_tiles: two simd groups, each loads a 5x3 tile (5 columns, 3 rows)
// of a 10-wide row-major source at its own column offset into an 8x4
// threadgroup tile (the rest zero-filled; simd group 1 clamps to the edge
// instead), waits, then both copy all 64 floats of threadgroup memory out
// through 1d and 2d copies back to device memory.
kernel void async_tiles(device const float* src [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        device float* flat [[buffer(2)]],
                        uint sg [[simdgroup_index_in_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]])
{
    threadgroup float tile[2][32];
    simdgroup_event ev[2];
    auto mode = sg == 0 ? simdgroup_async_copy_clamp_mode::clamp_to_zero : simdgroup_async_copy_clamp_mode::clamp_to_edge;
    ev[0].async_copy(tile[sg], ushort(8), ushort2(8, 4), src + 5 * sg, 10u, ushort2(5, 3), false, mode);
    simdgroup_event::wait(1, ev);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    // Each simd group copies the other's tile out: 8x4 into a 10-wide
    // destination at row 4 * sg, only the first 6 columns.
    ev[1].async_copy(out + 40 * sg, 10u, ushort2(6, 4), tile[1 - sg], ushort(8), ushort2(8, 4));
    simdgroup_event::wait(1, ev + 1);
    if (sg == 0) {
        simdgroup_event e1;
        threadgroup float staged[64];
        e1.async_copy(staged, src, 64);
        simdgroup_event::wait(1, &e1);
        flat[lane] = staged[lane] + tile[0][lane];
        flat[32 + lane] = staged[32 + lane] + tile[1][lane];
    }
}
