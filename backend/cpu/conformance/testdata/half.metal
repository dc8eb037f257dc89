#include <metal_stdlib>
using namespace metal;

// half_convert rounds floats to half (ties to even, overflow to inf,
// subnormals, signed zero) and widens them back.
kernel void half_convert(device const float* in [[buffer(0)]],
                         device ushort* bits [[buffer(1)]],
                         device float* back [[buffer(2)]],
                         uint i [[thread_position_in_grid]])
{
    half h = half(in[i]);
    bits[i] = as_type<ushort>(h);
    back[i] = float(h);
}

// half_arith adds, multiplies and fuses nothing: each operation rounds once
// to half.
kernel void half_arith(device const ushort* a [[buffer(0)]],
                       device const ushort* b [[buffer(1)]],
                       device ushort* out [[buffer(2)]],
                       uint i [[thread_position_in_grid]])
{
    half x = as_type<half>(a[i]);
    half y = as_type<half>(b[i]);
    out[i * 4 + 0] = as_type<ushort>(half(x + y));
    out[i * 4 + 1] = as_type<ushort>(half(x * y));
    out[i * 4 + 2] = as_type<ushort>(half(x * y + x));
    out[i * 4 + 3] = as_type<ushort>(half(0.1h) + half(1.0H) + 3h);
}
