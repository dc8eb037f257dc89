#include <metal_stdlib>

// ggml's common header declares its block formats right after including
// <metal_stdlib>, before any `using namespace metal;`: half and half2 are
// built-in type names.
typedef half ggml_half;
typedef half2 ggml_half2;

// A block of ggml's q4_0 format: a half scale and 32 4-bit quants.
#define QK4_0 32
typedef struct {
    ggml_half d;
    uint8_t qs[QK4_0 / 2];
} block_q4_0;
static_assert(sizeof(block_q4_0) == sizeof(ggml_half) + QK4_0 / 2, "wrong q4_0 block size/padding");

using namespace metal;

// ggml keeps its non-linear 4-bit table at global scope in constant memory.
constexpr constant static half kvalues_iq4nl[16] = {
    -127.h, -104.h, -83.h, -65.h, -49.h, -35.h, -22.h, -10.h, 1.h, 13.h, 25.h, 38.h, 53.h, 69.h, 89.h, 113.h
};

// Scalars and vectors of the 16-bit types at global scope.
constant half kscale = 0.5h;
constant half2 kpair = half2(1.0h, -2.0h);
constant bfloat kthree = bfloat(3.0f);

// Reinterpreting through unions, as ggml and MLX do: a named union, an
// anonymous union inside a struct, and one of bfloat.
union f16_bits {
    half h;
    ushort u;
};
struct scaled {
    union {
        half h;
        ushort u;
    };
    float f;
};
union bf16_bits {
    bfloat b;
    ushort u;
};

// dequant_q4_0 expands one block per thread: 32 values d * (q - 8), low
// nibbles first, then the same quants through the iq4_nl table, then the
// 16-bit reinterpretations.
kernel void dequant_q4_0(device const block_q4_0* x [[buffer(0)]],
                         device float* y [[buffer(1)]],
                         device uint* bits [[buffer(2)]],
                         uint i [[thread_position_in_grid]]) {
    const block_q4_0 b = x[i];
    const float d = b.d;
    device float* yi = y + i * 64;
    for (int j = 0; j < QK4_0 / 2; ++j) {
        const int x0 = (b.qs[j] & 0x0F) - 8;
        const int x1 = (b.qs[j] >> 4) - 8;
        yi[j] = x0 * d;
        yi[j + QK4_0 / 2] = x1 * d;
        yi[j + QK4_0] = d * kvalues_iq4nl[b.qs[j] & 0x0F];
        yi[j + QK4_0 + QK4_0 / 2] = d * kvalues_iq4nl[b.qs[j] >> 4];
    }
    scaled s;
    s.h = b.d * kscale;
    s.f = 0.0f;
    f16_bits c;
    c.u = ushort((b.qs[0] | b.qs[1] << 8) & 0x7bff);
    bf16_bits e;
    e.b = bfloat(d * float(kthree));
    half2 p = half2(b.d) * kpair;
    device uint* o = bits + i * 5;
    o[0] = s.u;
    o[1] = as_type<uint>(float(c.h));
    o[2] = e.u;
    o[3] = as_type<uint>(p);
    o[4] = sizeof(scaled) | sizeof(f16_bits) << 8 | alignof(scaled) << 16;
}
