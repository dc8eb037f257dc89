#include <metal_stdlib>
using namespace metal;

// addmul is a user template: a swizzle passed to it deduces the vector type.
template <typename T>
T addmul(T a, T b) { return a + b * 2.0f; }

// swizzle reads and writes vector swizzles in xyzw and rgba spellings.
kernel void swizzle(device const float4* in [[buffer(0)]],
                    device float4* out [[buffer(1)]],
                    uint i [[thread_position_in_grid]])
{
    float4 v = in[i];
    float4 a = v.wzyx;
    float4 b = float4(v.xy, v.zw * 2.0f);
    float4 c = v;
    c.xy = v.zw;
    c.zw += float2(1.0f, 2.0f);
    float4 d = v;
    d.zyx = v.xyz;
    d.a = v.r + v.g;
    float3 e = v.rgb * v.bgr;
    float2 g = v.xx + v.yy;
    float4 f = v;
    f.yz++;
    --f.xw;
    (f.zw) += float2(10.0f, 20.0f);
    float2 t = addmul(v.zw, f.xy);
    out[i * 5 + 0] = a;
    out[i * 5 + 1] = b;
    out[i * 5 + 2] = c + d;
    out[i * 5 + 3] = float4(e, g.x - g.y);
    out[i * 5 + 4] = float4(t, f.zw);
}
