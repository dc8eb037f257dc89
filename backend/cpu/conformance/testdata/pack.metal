#include <metal_stdlib>
#include <metal_pack>
using namespace metal;

// pack: every unpack function on each thread's word, and every pack
// function on each thread's floats (some outside [0, 1] or [-1, 1], some
// NaN); the sRGB inputs stay on the linear segment of the transfer
// function, where it is a division or a product.
kernel void pack(device const uint* w [[buffer(0)]],
                 device const float4* f [[buffer(1)]],
                 device float4* uf [[buffer(2)]],
                 device half4* uh [[buffer(3)]],
                 device uint* pk [[buffer(4)]],
                 uint i [[thread_position_in_grid]]) {
    const uint x = w[i];
    device float4* o = uf + i * 7;
    o[0] = unpack_unorm4x8_to_float(x);
    o[1] = unpack_snorm4x8_to_float(x);
    o[2] = float4(unpack_unorm2x16_to_float(x), unpack_snorm2x16_to_float(x));
    o[3] = unpack_unorm10a2_to_float(x);
    o[4] = float4(unpack_unorm565_to_float(ushort(x)), 0.0f);
    o[5] = unpack_unorm4x8_srgb_to_float(x & 0xff0a0a0au);
    o[6] = float4(unpack_unorm4x8_srgb_to_half(x & 0x0a0a0a0au));
    device half4* h = uh + i * 3;
    h[0] = unpack_unorm4x8_to_half(x);
    h[1] = unpack_snorm4x8_to_half(x);
    h[2] = half4(unpack_unorm2x16_to_half(x), unpack_snorm2x16_to_half(x));
    const float4 v = f[i];
    device uint* p = pk + i * 11;
    p[0] = pack_float_to_unorm4x8(v);
    p[1] = pack_float_to_snorm4x8(v);
    p[2] = pack_half_to_unorm4x8(half4(v));
    p[3] = pack_half_to_snorm4x8(half4(v));
    p[4] = pack_float_to_unorm2x16(v.xy);
    p[5] = pack_float_to_snorm2x16(v.zw);
    p[6] = pack_half_to_snorm2x16(half2(v.xy));
    p[7] = pack_float_to_unorm10a2(v);
    p[8] = pack_float_to_unorm565(v.xyz);
    p[9] = pack_float_to_srgb_unorm4x8(float4(v.xyz * 0.002f, v.w));
    p[10] = pack_half_to_unorm10a2(half4(v));
}
