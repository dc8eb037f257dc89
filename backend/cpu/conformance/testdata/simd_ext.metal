#include <metal_stdlib>
using namespace metal;

// MLX's utils.h shuffles 64-bit values and bools through 32-bit ones with
// overloads of its own next to Metal's; they must coexist with the
// prelude's simd_shuffle_down.
inline uint64_t simd_shuffle_down(uint64_t data, uint16_t delta) {
    return as_type<uint64_t>(metal::simd_shuffle_down(as_type<uint2>(data), delta));
}
inline int64_t simd_shuffle_down(int64_t data, uint16_t delta) {
    return as_type<int64_t>(metal::simd_shuffle_down(as_type<uint2>(data), delta));
}
inline bool simd_shuffle_down(bool data, uint16_t delta) {
    return simd_shuffle_down(static_cast<uint32_t>(data), delta);
}

// simd_ext: broadcasts and shuffles of vectors (float4, half2, int3) and
// of 64-bit scalars, directly and through the MLX overloads.
kernel void simd_ext(device const float4* v [[buffer(0)]],
                     device const ulong* u [[buffer(1)]],
                     device float4* o4 [[buffer(2)]],
                     device half2* oh [[buffer(3)]],
                     device int4* oi [[buffer(4)]],
                     device ulong* ou [[buffer(5)]],
                     device long* os [[buffer(6)]],
                     device uint* ob [[buffer(7)]],
                     uint i [[thread_position_in_grid]],
                     ushort lane [[thread_index_in_simdgroup]]) {
    const float4 x = v[i];
    o4[i * 3 + 0] = simd_broadcast(x, 5);
    o4[i * 3 + 1] = quad_broadcast(x, 2);
    o4[i * 3 + 2] = simd_shuffle_xor(x, 3);
    const half2 h = half2(x.xy);
    oh[i * 2 + 0] = simd_broadcast(h, 31);
    oh[i * 2 + 1] = simd_shuffle(h, ushort((lane + 7) % 32));
    const int3 k = int3(x.xyz * 100.0f);
    oi[i] = int4(simd_broadcast(k, 7), simd_broadcast_first(k.z));
    const ulong a = u[i];
    ou[i * 3 + 0] = simd_shuffle(a, ushort(31 - lane));
    ou[i * 3 + 1] = simd_shuffle_down(a, ushort(3));
    ou[i * 3 + 2] = simd_broadcast(a, 0);
    const long b = long(a);
    os[i * 2 + 0] = simd_shuffle_up(b, 2);
    os[i * 2 + 1] = simd_shuffle_down(b, ushort(4));
    ob[i] = uint(simd_shuffle_down((a & 1) != 0, ushort(1)));
}
