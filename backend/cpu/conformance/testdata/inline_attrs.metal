#include <metal_stdlib>
using namespace metal;

// The spellings kernels use to force or forbid inlining and to unroll
// loops: MLX's METAL_FUNC (a GNU attribute), clang's scoped attributes,
// ggml's FOR_UNROLL and MLX's unroll pragma. None may change a result.
#define METAL_FUNC inline __attribute__((always_inline))
#define MLX_MTL_PRAGMA_UNROLL _Pragma("clang loop unroll(full)")
#define FOR_UNROLL(x) _Pragma("clang loop unroll(full)") for (x)

// MLX picks Metal's bfloat when the language has it, and an emulation of
// its own otherwise.
#if defined METAL_3_1 || (__METAL_VERSION__ >= 310)
typedef bfloat bfloat16_t;
#else
typedef ushort bfloat16_t;
#endif

METAL_FUNC float axpy(float a, float x, float y) { return a * x + y; }

[[clang::always_inline]] inline float twice(float x) { return x + x; }

__attribute__((noinline)) float thrice(float x) { return x + x + x; }

[[clang::noinline]] float square(float x) { return x * x; }

// inline_attrs: out[i] = sum over k < 8 of axpy(k, x, 1), then twice,
// thrice and square of it, and the bfloat16_t rounding of the result.
kernel void inline_attrs(device const float* in [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    const float x = in[i];
    float s = 0.0f;
    MLX_MTL_PRAGMA_UNROLL
    for (int k = 0; k < 4; k++) {
        s += axpy(float(k), x, 1.0f);
    }
    FOR_UNROLL (int k = 4; k < 8; k++) {
        s += axpy(float(k), x, 1.0f);
    }
#pragma unroll
    for (int k = 0; k < 1; k++) {
        s = square(thrice(twice(s)));
    }
    out[i * 2] = s;
    out[i * 2 + 1] = float(bfloat16_t(s));
}
