#include <metal_stdlib>
#include <metal_integer>
using namespace metal;

// integer_ext: Metal's spellings of the saturating and high-half integer
// functions (absdiff, addsat, subsat, madhi, madsat, mul24, mad24) on
// int, uint, short, uchar and long scalars and on int4 and ushort2 vectors.
kernel void integer_ext(device const int* a [[buffer(0)]],
                        device const int* b [[buffer(1)]],
                        device const int* c [[buffer(2)]],
                        device uint* out [[buffer(3)]],
                        device long* lout [[buffer(4)]],
                        uint i [[thread_position_in_grid]]) {
    const int x = a[i], y = b[i], z = c[i];
    const uint ux = uint(x), uy = uint(y), uz = uint(z);
    const short sx = short(x), sy = short(y);
    const uchar cx = uchar(x), cy = uchar(y);
    device uint* o = out + i * 16;
    o[0] = absdiff(x, y);
    o[1] = uint(addsat(x, y));
    o[2] = uint(subsat(x, y));
    o[3] = addsat(ux, uy);
    o[4] = subsat(ux, uy);
    o[5] = uint(madhi(x, y, z));
    o[6] = madhi(ux, uy, uz);
    o[7] = uint(madsat(x, y, z));
    o[8] = madsat(ux, uy, uz);
    o[9] = uint(mul24(x >> 8, y >> 8)) ^ mad24(ux >> 8, uy >> 8, uz);
    o[10] = uint(addsat(sx, sy)) & 0xffff | uint(subsat(cx, cy)) << 16 | uint(absdiff(cx, cy)) << 24;
    o[11] = uint(madsat(sx, sy, short(z)));
    const int4 v = int4(x, y, z, x ^ y);
    const int4 w = int4(y, z, x, x & y);
    const uint4 d = absdiff(v, w);
    const int4 s = addsat(v, w) ^ subsat(v, w) ^ madsat(v, w, v);
    o[12] = d.x ^ d.w;
    o[13] = uint(s.y ^ s.z);
    const ushort2 us = addsat(ushort2(ux, uy), ushort2(uy, uz));
    o[14] = uint(us.x) | uint(us.y) << 16;
    o[15] = uint(mad24(int4(x >> 8), int4(y >> 8), int4(z)).w);
    const long lx = long(x) << 32 | long(uy), ly = long(y) << 31 ^ long(uz);
    device long* l = lout + i * 4;
    l[0] = addsat(lx, ly);
    l[1] = subsat(lx, ly);
    l[2] = madhi(lx, ly, long(z));
    l[3] = madsat(lx, ly, long(z));
}

// integer_bits: the bit functions on uint, int, ushort and uchar scalars
// and a uint4 vector: popcount, clz, ctz, reverse_bits, rotate,
// extract_bits, insert_bits, hadd, rhadd, mulhi, abs.
kernel void integer_bits(device const uint* a [[buffer(0)]],
                         device const uint* b [[buffer(1)]],
                         device uint* out [[buffer(2)]],
                         uint i [[thread_position_in_grid]]) {
    const uint x = a[i], y = b[i];
    const int sx = int(x), sy = int(y);
    const ushort hx = ushort(x);
    const uchar cx = uchar(x);
    device uint* o = out + i * 14;
    o[0] = popcount(x) | uint(popcount(hx)) << 8 | uint(popcount(cx)) << 16;
    o[1] = clz(x) | uint(clz(hx)) << 8 | uint(clz(cx)) << 16 | uint(clz(sx)) << 24;
    o[2] = ctz(x) | uint(ctz(hx)) << 8 | uint(ctz(cx)) << 16;
    o[3] = reverse_bits(x);
    o[4] = rotate(x, y) ^ uint(rotate(hx, ushort(y))) << 16;
    const uint off = y % 32;
    const uint nb = (y >> 8) % (33 - off);
    o[5] = extract_bits(x, off, nb);
    o[6] = uint(extract_bits(sx, 4, 12));
    o[7] = insert_bits(x, y, 8, 12);
    o[8] = hadd(x, y) ^ rhadd(x, y) << 1;
    o[9] = uint(hadd(sx, sy)) ^ uint(rhadd(sx, sy));
    o[10] = mulhi(x, y);
    o[11] = uint(mulhi(sx, sy));
    o[12] = uint(abs(sx));
    const uint4 v = uint4(x, y, x ^ y, x + y);
    const uint4 pc = popcount(v);
    o[13] = pc.x + 2 * pc.y + 3 * pc.z + 4 * pc.w + reverse_bits(v).w;
}
