#include <metal_stdlib>
using namespace metal;

#define MAX(x, y) ((x) > (y) ? (x) : (y))

// mixed_math combines vectors with scalars the way kernels do (Metal
// converts a scalar argument to a vector of it): ReLU as fmax(v, 0.0f),
// scalar-first fmin, clamp with scalar bounds, step with a scalar edge,
// mix with a scalar weight, smoothstep with scalar edges, NaN tests against
// a scalar; in float, half and int. z holds NaNs; v and w do not.
kernel void mixed_math(device const float4* v [[buffer(0)]],
                       device const float4* w [[buffer(1)]],
                       device const float4* z [[buffer(2)]],
                       device const int4* n [[buffer(3)]],
                       device float4* out [[buffer(4)]],
                       device half4* hout [[buffer(5)]],
                       device int4* iout [[buffer(6)]],
                       uint i [[thread_position_in_grid]]) {
    const float4 x = v[i];
    const float4 y = w[i];
    const float4 q = z[i];
    device float4* o = out + i * 12;
    o[0] = fmax(q, 0.0f);
    o[1] = fmin(0.5f, q);
    o[2] = clamp(x, -1.0f, 1.0f);
    o[3] = clamp(0.25f, x, y);
    o[4] = step(0.0f, x);
    o[5] = mix(x, y, 0.25f);
    o[6] = smoothstep(-1.0f, 1.0f, x);
    o[7] = max(x, y.x) + min(y.y, x);
    o[8] = select(x, y, isunordered(q, 0.0f));
    o[9] = float4(isordered(q, x)) + float4(ilogb(y)) * 2.0f;
    o[10] = fmax3(x, 0.0f, y) + fmedian3(-0.5f, x, y);
    o[11] = float4(MAX(x.x, 0.0f), metal::max(x.y, 0.0f), precise::fmax(x.z, y).z, fast::fmin(y.w, x).w);
    const half4 h = half4(x);
    device half4* ho = hout + i * 3;
    ho[0] = fmax(h, 0.0f);
    ho[1] = clamp(h, -0.5h, half(0.5));
    ho[2] = mix(h, half4(y), 0.5h);
    const int4 k = n[i];
    device int4* io = iout + i * 3;
    io[0] = max(k, 0);
    io[1] = clamp(k, -100, 100);
    io[2] = min(7, k) + max3(k, 0, -k);
}

// relational: the relational functions on float4 and half4 inputs that
// include NaN, infinities, subnormals and signed zeros; each bit of the
// result word is one test.
kernel void relational(device const float4* v [[buffer(0)]],
                       device uint* out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    const float4 x = v[i];
    const half4 h = half4(x);
    uint r = 0;
    uint k = 0;
    for (int c = 0; c < 4; c++) {
        r |= uint(isnan(x)[c]) << k++;
        r |= uint(isinf(x)[c]) << k++;
        r |= uint(isfinite(x)[c]) << k++;
        r |= uint(isnormal(x)[c]) << k++;
        r |= uint(signbit(x)[c]) << k++;
        r |= uint(isnormal(h[c])) << k++;
    }
    r |= uint(all(x == x)) << k++;
    r |= uint(any(isinf(x))) << k++;
    r |= uint(all(bool4(isordered(x, x.yzwx)))) << k++;
    r |= uint(any(isunordered(h, half(0)))) << k++;
    out[i * 2] = r;
    const float4 s = select(float4(0.0f), x, isfinite(x) && !signbit(x));
    out[i * 2 + 1] = as_type<uint>(s.x + s.y + s.z + s.w);
}
