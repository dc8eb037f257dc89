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

#define METAL_FUNC inline __attribute__((always_inline))

// get_coord is MLX's BaseMMAFrag::get_coord: the row (y) and first column
// (x) of the two elements a lane holds of an 8x8 simdgroup matrix on Apple
// GPUs.
METAL_FUNC short2 get_coord(ushort simd_lane_id) {
    const short qid = simd_lane_id / 4;
    const short fm = (qid & 4) + ((simd_lane_id / 2) % 4);
    const short fn = (qid & 2) * 2 + (simd_lane_id % 2) * 2;
    return short2{fn, fm};
}

// mma_frag multiplies half fragments into float accumulators the way MLX's
// steel GEMM does: A is read into thread_elements() at get_coord, B is
// loaded, C is loaded or filled (make_filled_simdgroup_matrix with one
// size), and D1 = A*B + C is written back through thread_elements() at
// get_coord; D2 = A*B + 0.5 is stored transposed into a 10x12 matrix at
// column 1, row 2. T is the 8x8 block at column 3, row 1 of that 10x12
// matrix loaded transposed; L is each lane's thread_elements() of a
// matrix holding 0..63.
kernel void mma_frag(device const half* A [[buffer(0)]],
                     device const half* B [[buffer(1)]],
                     device const float* C [[buffer(2)]],
                     device const float* big [[buffer(3)]],
                     device float* D1 [[buffer(4)]],
                     device float* D2 [[buffer(5)]],
                     device float* T [[buffer(6)]],
                     device float* L [[buffer(7)]],
                     ushort lane [[thread_index_in_simdgroup]])
{
    const short2 c = get_coord(lane);
    simdgroup_half8x8 a;
    a.thread_elements()[0] = A[c.y * 8 + c.x];
    a.thread_elements()[1] = A[c.y * 8 + c.x + 1];
    simdgroup_half8x8 b;
    simdgroup_load(b, B, 8);
    simdgroup_float8x8 cm;
    simdgroup_load(cm, C);
    simdgroup_float8x8 d;
    simdgroup_multiply_accumulate(d, a, b, cm);
    D1[c.y * 8 + c.x] = d.thread_elements()[0];
    D1[c.y * 8 + c.x + 1] = d.thread_elements()[1];

    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8>(0.5f);
    simdgroup_multiply_accumulate(acc, a, b, acc);
    simdgroup_store(acc, D2, 12, ulong2(1, 2), true);

    simdgroup_float8x8 t;
    simdgroup_load(t, big, 12, ulong2(3, 1), true);
    simdgroup_store(t, T, 8);

    simdgroup_float8x8 iota;
    simdgroup_load(iota, big + 120, 8);
    float2 e = iota.thread_elements();
    L[lane * 2] = e.x;
    L[lane * 2 + 1] = e.y;
}

// mma_bf16 is D = A*B + C in bfloat: every step of each dot product
// rounds to bfloat.
kernel void mma_bf16(device const bfloat* A [[buffer(0)]],
                     device const bfloat* B [[buffer(1)]],
                     device const bfloat* C [[buffer(2)]],
                     device bfloat* D [[buffer(3)]])
{
    simdgroup_bfloat8x8 a, b, c;
    simdgroup_load(a, A);
    simdgroup_load(b, B);
    simdgroup_load(c, C);
    simdgroup_multiply_accumulate(c, a, b, c);
    simdgroup_store(c, D);
}
