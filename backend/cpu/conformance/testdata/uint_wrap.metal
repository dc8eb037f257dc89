#include <metal_stdlib>
using namespace metal;

// uint_wrap checks 32- and 16-bit wraparound. Its buffers have no
// [[buffer(n)]] attributes: they bind in parameter order.
kernel void uint_wrap(device const uint* a,
                      device const uint* b,
                      device uint* out,
                      uint i [[thread_position_in_grid]])
{
    uint x = a[i];
    uint y = b[i];
    out[i * 4 + 0] = x * y + 0xFFFFFFF0u;
    out[i * 4 + 1] = x - y;
    out[i * 4 + 2] = (x << (y & 31u)) ^ (x >> 3);
    ushort s = ushort(x);
    out[i * 4 + 3] = uint(ushort(s * ushort(y) + ushort(65535)));
}
