#include <metal_stdlib>
#include <metal_matrix>
using namespace metal;

// ggml declares the bfloat matrix itself: Metal has matrix<bfloat, 4, 4>
// but no typedef for it.
typedef matrix<bfloat, 4, 4> bfloat4x4;

// dequantize_bf16 is ggml's "not dequantizing, just fitting the template"
// helper: a C-style cast between matrix element types.
template <typename type4x4>
void dequantize_bf16(device const bfloat4x4* src, thread type4x4& reg) {
    reg = (type4x4)(*src);
}

// matrix_fn: per thread, the determinants of a 2x2, 3x3 and 4x4 float
// matrix and of a 3x3 half matrix, a transpose, compound assignments and a
// bfloat-to-float matrix conversion.
kernel void matrix_fn(device const float4x4* m [[buffer(0)]],
                      device const bfloat4x4* b [[buffer(1)]],
                      device float* out [[buffer(2)]],
                      device ushort* hout [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
    const float4x4 a = m[i];
    float2x2 a2 = float2x2(a[0].xy, a[1].xy);
    float3x3 a3 = float3x3(a[0].xyz, a[1].xyz, a[2].xyz);
    half3x3 h3 = half3x3(a3);
    device float* o = out + i * 24;
    o[0] = determinant(a2);
    o[1] = determinant(a3);
    o[2] = determinant(a);
    hout[i] = as_type<ushort>(determinant(h3));
    float4x4 t = transpose(a);
    t *= 2.0f;
    t += a;
    t -= float4x4(1.0f);
    o[3] = t[1][2];
    o[4] = t[3][0];
    float3x3 p = a3;
    p *= a3;
    o[5] = p[2][1];
    o[6] = (-a2)[1][0];
    o[7] = (a == a) && !(a != a) ? 1.0f : 0.0f;
    float4x4 f;
    dequantize_bf16(b + i, f);
    for (int k = 0; k < 16; k++) {
        o[8 + k] = f[k / 4][k % 4];
    }
}
