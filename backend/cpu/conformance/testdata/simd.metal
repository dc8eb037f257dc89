#include <metal_stdlib>
using namespace metal;

#define NOPS 30

// simd_uint writes NOPS results of simd- and quad-group functions per thread.
kernel void simd_uint(device const uint* in [[buffer(0)]],
                      device uint* out [[buffer(1)]],
                      uint gid [[thread_position_in_grid]],
                      ushort lane [[thread_index_in_simdgroup]])
{
    uint v = in[gid];
    device uint* o = out + gid * NOPS;
    o[0] = simd_sum(v);
    o[1] = simd_product(v | 1u);
    o[2] = simd_min(v);
    o[3] = simd_max(v);
    o[4] = simd_and(v | 0xF0000000u);
    o[5] = simd_or(v & 0x0F0F0F0Fu);
    o[6] = simd_xor(v);
    o[7] = simd_prefix_inclusive_sum(v);
    o[8] = simd_prefix_exclusive_sum(v);
    o[9] = simd_prefix_inclusive_product(v | 1u);
    o[10] = simd_prefix_exclusive_product(v | 1u);
    o[11] = simd_shuffle(v, ushort((lane * 7u + 3u) % 32u));
    o[12] = simd_shuffle_xor(v, ushort(5));
    o[13] = simd_shuffle_up(v, ushort(3));
    o[14] = simd_shuffle_down(v, ushort(3));
    o[15] = simd_shuffle_rotate_up(v, ushort(5));
    o[16] = simd_shuffle_rotate_down(v, ushort(5));
    o[17] = simd_broadcast(v, ushort(9));
    o[18] = simd_broadcast_first(v);
    o[19] = simd_all(v != 0u) ? 1u : 0u;
    o[20] = simd_any(v == 0u) ? 1u : 0u;
    o[21] = uint(static_cast<simd_vote::vote_t>(simd_ballot((v & 1u) != 0u)));
    o[22] = simd_is_first() ? 1u : 0u;
    o[23] = uint(static_cast<simd_vote::vote_t>(simd_active_threads_mask()));
    o[24] = quad_sum(v);
    o[25] = quad_shuffle(v, ushort((lane + 1u) % 4u));
    o[26] = quad_broadcast(v, ushort(2));
    o[27] = quad_shuffle_xor(v, ushort(3));
    o[28] = quad_shuffle_down(v, ushort(1));
    o[29] = quad_max(v);
}

// simd_float folds float values; the emulator folds lanes 0..31 in order.
kernel void simd_float(device const float* in [[buffer(0)]],
                       device float4* out [[buffer(1)]],
                       uint gid [[thread_position_in_grid]])
{
    float v = in[gid];
    out[gid] = float4(simd_sum(v), simd_prefix_inclusive_sum(v),
                      simd_prefix_exclusive_sum(v), simd_max(v));
}

// simd_divergent runs collectives in a branch only some lanes take.
kernel void simd_divergent(device const uint* in [[buffer(0)]],
                           device uint4* out [[buffer(1)]],
                           uint gid [[thread_position_in_grid]],
                           ushort lane [[thread_index_in_simdgroup]])
{
    uint v = in[gid];
    uint4 r = uint4(0xFFFFFFFFu);
    if (lane >= 5 && (lane % 3) != 0) {
        r.x = uint(static_cast<simd_vote::vote_t>(simd_active_threads_mask()));
        r.y = simd_broadcast_first(v);
        r.z = simd_is_first() ? 1u : 0u;
        r.w = simd_sum(v);
    }
    out[gid] = r;
}

// simd_vote_all checks simd_vote::all() against simd_all: all() is true
// only when every one of the 32 lanes' bits is set, so in a partial
// SIMD-group (or a branch some lanes skip) simd_ballot(true).all() is false
// while simd_all(true) is true over the active lanes.
kernel void simd_vote_all(device uint* out [[buffer(0)]],
                          uint i [[thread_position_in_threadgroup]])
{
    simd_vote v = simd_ballot(true);
    uint r = uint(v.all()) | uint(v.any()) << 1 | uint(simd_all(true)) << 2;
    if (i % 2 == 0) {
        simd_vote e = simd_ballot(true);
        r |= uint(e.all()) << 3 | uint(e.any()) << 4 | uint(simd_all(true)) << 5;
    }
    out[i] = r;
}
