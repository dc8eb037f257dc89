#include <metal_stdlib>
using namespace metal;

// bfloat_math: bfloat scalars, vectors and packed vectors through the math
// functions with correctly rounded float results (each computed in float
// and rounded once to bfloat), arithmetic on packed_bfloat4 as loaded from
// a buffer, and pow of half on arguments whose powers are exact.
kernel void bfloat_math(device const packed_bfloat4* x [[buffer(0)]],
                        device const half* h [[buffer(1)]],
                        device bfloat* out [[buffer(2)]],
                        device half* hout [[buffer(3)]],
                        uint i [[thread_position_in_grid]]) {
    const packed_bfloat4 p = x[i];
    const bfloat4 v = bfloat4(p);
    const bfloat b = v.x;
    device bfloat* o = out + i * 20;
    o[0] = sqrt(fabs(b));
    o[1] = floor(b) + ceil(v.y);
    o[2] = trunc(v.z) - rint(v.w);
    o[3] = fma(b, v.y, v.z);
    o[4] = fmax(b, v.y);
    o[5] = fmin(v.z, bfloat(0.0f));
    o[6] = copysign(v.w, b);
    o[7] = clamp(b, bfloat(-1.0f), bfloat(1.0f));
    o[8] = abs(v.w) * bfloat(3);
    o[9] = fract(b);
    o[10] = mix(b, v.y, bfloat(0.25f));
    o[11] = saturate(v.z);
    const bfloat4 q = p + p * bfloat(0.5f);
    o[12] = q.x;
    o[13] = q.w;
    const packed_bfloat4 s = packed_bfloat4(sqrt(abs(v)));
    o[14] = s[1];
    o[15] = dot(v, bfloat4(1.0f));
    o[16] = max(v, bfloat(0.5f)).z;
    o[17] = bfloat(float(b) * 3.0f) / v.y;
    o[18] = -b;
    o[19] = select(b, v.y, b < v.y);
    const half a = h[i];
    device half* ho = hout + i * 3;
    ho[0] = pow(a, 2.0h);
    ho[1] = pow(half2(a, a * a), half2(0.5h, 0.5h)).y;
    ho[2] = precise::pow(fabs(a), 3.0h);
}
