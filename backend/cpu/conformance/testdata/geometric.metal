#include <metal_stdlib>
#include <metal_geometric>
using namespace metal;

// geometric: the geometric functions on float3 and float4 (and a half3
// dot): dot, cross, length, length_squared, distance, distance_squared,
// normalize, faceforward, reflect and refract (with a ratio that refracts
// and one that totally reflects).
kernel void geometric(device const float4* a [[buffer(0)]],
                      device const float4* b [[buffer(1)]],
                      device float* out [[buffer(2)]],
                      device ushort* hout [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
    const float4 x = a[i];
    const float4 y = b[i];
    const float3 n = normalize(y.xyz);
    device float* o = out + i * 20;
    o[0] = dot(x, y);
    o[1] = length(x);
    o[2] = length_squared(x.xyz);
    o[3] = distance(x, y);
    o[4] = distance_squared(x.xy, y.xy);
    const float3 c = cross(x.xyz, y.xyz);
    o[5] = c.x;
    o[6] = c.y;
    o[7] = c.z;
    o[8] = n.x;
    o[9] = n.z;
    const float3 f = faceforward(n, x.xyz, y.zxy);
    o[10] = f.y;
    const float3 r = reflect(x.xyz, n);
    o[11] = r.x;
    o[12] = r.z;
    const float3 t = refract(normalize(x.xyz), n, 0.75f);
    o[13] = t.x;
    o[14] = t.y;
    o[15] = t.z;
    const float3 tir = refract(normalize(x.xyz), n, 4.0f);
    o[16] = tir.x + tir.y + tir.z;
    o[17] = precise::length(x.xy);
    o[18] = fast::distance(x.xyz, y.xyz);
    o[19] = normalize(x).w;
    hout[i] = as_type<ushort>(dot(half3(x.xyz), half3(y.xyz)));
}
