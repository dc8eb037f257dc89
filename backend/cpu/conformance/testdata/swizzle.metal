#include <metal_stdlib>
using namespace metal;

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
    out[i * 4 + 0] = a;
    out[i * 4 + 1] = b;
    out[i * 4 + 2] = c + d;
    out[i * 4 + 3] = float4(e, g.x - g.y);
}
