#include <metal_stdlib>
using namespace metal;

// matmul8 computes D = A * B + C for 8x8 row-major matrices with one
// simdgroup.
kernel void matmul8(device const float* A [[buffer(0)]],
                    device const float* B [[buffer(1)]],
                    device const float* C [[buffer(2)]],
                    device float* D [[buffer(3)]])
{
    simdgroup_float8x8 a;
    simdgroup_float8x8 b;
    simdgroup_float8x8 c;
    simdgroup_load(a, A, 8);
    simdgroup_load(b, B, 8);
    simdgroup_load(c, C, 8);
    simdgroup_multiply_accumulate(c, a, b, c);
    simdgroup_store(c, D, 8);
}

// matmul8_inplace accumulates into C in place: every lane of the simdgroup
// loads C before any lane stores it, as on the GPU.
kernel void matmul8_inplace(device const float* A [[buffer(0)]],
                            device const float* B [[buffer(1)]],
                            device float* C [[buffer(2)]])
{
    simdgroup_float8x8 a;
    simdgroup_float8x8 b;
    simdgroup_float8x8 c;
    simdgroup_load(a, A, 8);
    simdgroup_load(b, B, 8);
    simdgroup_load(c, C, 8);
    simdgroup_multiply_accumulate(c, a, b, c);
    simdgroup_store(c, C, 8);
}
