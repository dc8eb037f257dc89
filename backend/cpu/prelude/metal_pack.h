// metal_pack.h — <metal_pack>: packing floats into normalised integers in
// a uint (or ushort) and unpacking them, the pack_* and unpack_* functions.
//
// Component 0 is always in the lowest bits. Conversions follow Metal's
// rules for normalised integers: unpacking an N-bit unorm c gives
// c / (2^N - 1) and an snorm max(-1, c / (2^(N-1) - 1)), each one correctly
// rounded float division; packing clamps to [0, 1] (unorm) or [-1, 1]
// (snorm), NaN becoming 0, scales by the same factor and rounds to nearest
// even. sRGB variants apply the sRGB transfer function to r, g and b
// (alpha stays linear). The half variants compute in float and round each
// unpacked value to half once.
#pragma once
#include "metal_math.h"
#include "metal_scalar.h"
#include "metal_vector.h"

namespace metal {

namespace mtl_detail {

// unorm_to_float and snorm_to_float decode an N-bit normalised integer.
inline float unorm_to_float(uint c, int bits) { return float(c) / float((1u << bits) - 1u); }
inline float snorm_to_float(uint c, int bits) {
  int v = int(c << (32 - bits)) >> (32 - bits);  // sign-extend
  return fmax_f(float(v) / float((1u << (bits - 1)) - 1u), -1.0f);
}
// float_to_unorm and float_to_snorm encode f as an N-bit normalised
// integer (the bits of an snorm in the low N bits).
inline uint float_to_unorm(float f, int bits) {
  float s = float((1u << bits) - 1u);
  return uint(__builtin_rintf(fmin_f(fmax_f(f, 0.0f), 1.0f) * s));
}
inline uint float_to_snorm(float f, int bits) {
  float s = float((1u << (bits - 1)) - 1u);
  int v = int(__builtin_rintf(fmin_f(fmax_f(f, -1.0f), 1.0f) * s));
  return uint(v) & ((1u << bits) - 1u);
}
// srgb_to_linear and linear_to_srgb are the sRGB transfer functions.
inline float srgb_to_linear(float c) {
  return c <= 0.04045f ? c / 12.92f : __builtin_powf(opaque((c + 0.055f) / 1.055f), 2.4f);
}
inline float linear_to_srgb(float c) {
  c = fmin_f(fmax_f(c, 0.0f), 1.0f);
  return c <= 0.0031308f ? c * 12.92f : 1.055f * __builtin_powf(opaque(c), 1.0f / 2.4f) - 0.055f;
}

template <class T>
inline vec<T, 4> unpack4x8(uint x, bool snorm, bool srgb) {
  vec<T, 4> r{};
  for (int i = 0; i < 4; i++) {
    uint c = (x >> (8 * i)) & 0xffu;
    float f = snorm ? snorm_to_float(c, 8) : unorm_to_float(c, 8);
    r[i] = T(srgb && i < 3 ? srgb_to_linear(f) : f);
  }
  return r;
}
template <class T>
inline vec<T, 2> unpack2x16(uint x, bool snorm) {
  vec<T, 2> r{};
  for (int i = 0; i < 2; i++) {
    uint c = (x >> (16 * i)) & 0xffffu;
    r[i] = T(snorm ? snorm_to_float(c, 16) : unorm_to_float(c, 16));
  }
  return r;
}
template <class T, bool P>
inline uint pack4x8(const basic_vec<T, 4, P>& v, bool snorm, bool srgb) {
  uint r = 0;
  for (int i = 0; i < 4; i++) {
    float f = float(v[i]);
    if (srgb && i < 3) f = linear_to_srgb(f);
    r |= (snorm ? float_to_snorm(f, 8) : float_to_unorm(f, 8)) << (8 * i);
  }
  return r;
}
template <class T, bool P>
inline uint pack2x16(const basic_vec<T, 2, P>& v, bool snorm) {
  uint r = 0;
  for (int i = 0; i < 2; i++) {
    float f = float(v[i]);
    r |= (snorm ? float_to_snorm(f, 16) : float_to_unorm(f, 16)) << (16 * i);
  }
  return r;
}
// 10a2: r, g and b in 10 bits each from bit 0 up, alpha in bits 30-31.
template <class T>
inline vec<T, 4> unpack10a2(uint x) {
  return vec<T, 4>(T(unorm_to_float(x & 0x3ffu, 10)), T(unorm_to_float((x >> 10) & 0x3ffu, 10)),
                   T(unorm_to_float((x >> 20) & 0x3ffu, 10)), T(unorm_to_float(x >> 30, 2)));
}
template <class T, bool P>
inline uint pack10a2(const basic_vec<T, 4, P>& v) {
  return float_to_unorm(float(v[0]), 10) | float_to_unorm(float(v[1]), 10) << 10 |
         float_to_unorm(float(v[2]), 10) << 20 | float_to_unorm(float(v[3]), 2) << 30;
}
// 565: component 0 in bits 0-4, 1 in bits 5-10, 2 in bits 11-15.
template <class T>
inline vec<T, 3> unpack565(ushort x) {
  return vec<T, 3>(T(unorm_to_float(x & 0x1fu, 5)), T(unorm_to_float((x >> 5) & 0x3fu, 6)),
                   T(unorm_to_float((x >> 11) & 0x1fu, 5)));
}
template <class T, bool P>
inline ushort pack565(const basic_vec<T, 3, P>& v) {
  return ushort(float_to_unorm(float(v[0]), 5) | float_to_unorm(float(v[1]), 6) << 5 |
                float_to_unorm(float(v[2]), 5) << 11);
}

}  // namespace mtl_detail

inline float4 unpack_unorm4x8_to_float(uint x) { return mtl_detail::unpack4x8<float>(x, false, false); }
inline float4 unpack_snorm4x8_to_float(uint x) { return mtl_detail::unpack4x8<float>(x, true, false); }
inline half4 unpack_unorm4x8_to_half(uint x) { return mtl_detail::unpack4x8<half>(x, false, false); }
inline half4 unpack_snorm4x8_to_half(uint x) { return mtl_detail::unpack4x8<half>(x, true, false); }
inline float4 unpack_unorm4x8_srgb_to_float(uint x) { return mtl_detail::unpack4x8<float>(x, false, true); }
inline half4 unpack_unorm4x8_srgb_to_half(uint x) { return mtl_detail::unpack4x8<half>(x, false, true); }
inline float2 unpack_unorm2x16_to_float(uint x) { return mtl_detail::unpack2x16<float>(x, false); }
inline float2 unpack_snorm2x16_to_float(uint x) { return mtl_detail::unpack2x16<float>(x, true); }
inline half2 unpack_unorm2x16_to_half(uint x) { return mtl_detail::unpack2x16<half>(x, false); }
inline half2 unpack_snorm2x16_to_half(uint x) { return mtl_detail::unpack2x16<half>(x, true); }
inline float4 unpack_unorm10a2_to_float(uint x) { return mtl_detail::unpack10a2<float>(x); }
inline half4 unpack_unorm10a2_to_half(uint x) { return mtl_detail::unpack10a2<half>(x); }
inline float3 unpack_unorm565_to_float(ushort x) { return mtl_detail::unpack565<float>(x); }
inline half3 unpack_unorm565_to_half(ushort x) { return mtl_detail::unpack565<half>(x); }

inline uint pack_float_to_unorm4x8(float4 v) { return mtl_detail::pack4x8(v, false, false); }
inline uint pack_float_to_snorm4x8(float4 v) { return mtl_detail::pack4x8(v, true, false); }
inline uint pack_half_to_unorm4x8(half4 v) { return mtl_detail::pack4x8(v, false, false); }
inline uint pack_half_to_snorm4x8(half4 v) { return mtl_detail::pack4x8(v, true, false); }
inline uint pack_float_to_srgb_unorm4x8(float4 v) { return mtl_detail::pack4x8(v, false, true); }
inline uint pack_half_to_srgb_unorm4x8(half4 v) { return mtl_detail::pack4x8(v, false, true); }
inline uint pack_float_to_unorm2x16(float2 v) { return mtl_detail::pack2x16(v, false); }
inline uint pack_float_to_snorm2x16(float2 v) { return mtl_detail::pack2x16(v, true); }
inline uint pack_half_to_unorm2x16(half2 v) { return mtl_detail::pack2x16(v, false); }
inline uint pack_half_to_snorm2x16(half2 v) { return mtl_detail::pack2x16(v, true); }
inline uint pack_float_to_unorm10a2(float4 v) { return mtl_detail::pack10a2(v); }
inline uint pack_half_to_unorm10a2(half4 v) { return mtl_detail::pack10a2(v); }
inline ushort pack_float_to_unorm565(float3 v) { return mtl_detail::pack565(v); }
inline ushort pack_half_to_unorm565(half3 v) { return mtl_detail::pack565(v); }

}  // namespace metal
