// matmul2d.metal: MSL 4 tensors and MetalPerformancePrimitives' matmul2d
// through cooperative tensors, the shape of a 64x64x128 attention score
// tile. C (M x N, row-major floats) = A (M x K) * B (K x N), one 64x64
// tile per threadgroup of four simd groups.
#include <metal_stdlib>
#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
using namespace metal;
using namespace mpp::tensor_ops;

constant constexpr int TM = 64;
constant constexpr int TN = 64;

// mm_coop accumulates each tile in a cooperative tensor over the whole K
// and stores it once through a slice of the destination.
kernel void mm_coop(device const float* a_buf [[buffer(0)]],
                    device const float* b_buf [[buffer(1)]],
                    device float* c_buf [[buffer(2)]],
                    constant int& M [[buffer(3)]],
                    constant int& N [[buffer(4)]],
                    constant int& K [[buffer(5)]],
                    uint2 tgid [[threadgroup_position_in_grid]])
{
    auto A = tensor<device const float, dextents<int32_t, 2>, tensor_inline>(a_buf, dextents<int32_t, 2>(K, M));
    auto B = tensor<device const float, dextents<int32_t, 2>, tensor_inline>(b_buf, dextents<int32_t, 2>(N, K));
    auto C = tensor(c_buf, dextents<int32_t, 2>(N, M), array<int32_t, 2>({1, N}));

    constexpr auto desc = matmul2d_descriptor(TM, TN, static_cast<int>(dynamic_extent), false, false, false,
                                              matmul2d_descriptor::mode::multiply);
    matmul2d<desc, execution_simdgroups<4>> op;

    auto mA = A.slice(0, int(tgid.y) * TM);
    auto mB = B.slice(int(tgid.x) * TN, 0);
    auto acc = op.get_destination_cooperative_tensor<decltype(mA), decltype(mB), float>();
    op.run(mA, mB, acc);
    auto mC = C.slice(int(tgid.x) * TN, int(tgid.y) * TM);
    acc.store(mC);
}

// mm_slices computes the same product in blocks of 32 along K into the
// destination in memory (multiply, then multiply_accumulate), and writes
// the row sums of each tile through a slice taken at a negative offset:
// rowsum.slice(0, -row0) seen from row row0 is the whole buffer, so
// element (0, row0 + r) of the slice is rowsum[r + 2 * row0]... the tile's
// rows land at their global index.
kernel void mm_slices(device const float* a_buf [[buffer(0)]],
                      device const float* b_buf [[buffer(1)]],
                      device float* c_buf [[buffer(7)]],
                      constant int& M [[buffer(3)]],
                      constant int& N [[buffer(4)]],
                      constant int& K [[buffer(5)]],
                      device float* rowsum [[buffer(6)]],
                      uint2 tgid [[threadgroup_position_in_grid]],
                      uint tid [[thread_index_in_threadgroup]])
{
    tensor<device const float, dextents<int32_t, 2>, tensor_inline> A(a_buf, dextents<int32_t, 2>(K, M));
    tensor<device const float, dextents<int32_t, 2>, tensor_inline> B(b_buf, dextents<int32_t, 2>(N, K));
    tensor<device float, dextents<int32_t, 2>, tensor_inline> C(c_buf, dextents<int32_t, 2>(N, M));
    constexpr auto first = matmul2d_descriptor(TM, TN, 32, false, false, false, matmul2d_descriptor::mode::multiply);
    constexpr auto rest = matmul2d_descriptor(TM, TN, 32, false, false, false,
                                              matmul2d_descriptor::mode::multiply_accumulate);
    matmul2d<first, execution_simdgroups<4>> op0;
    matmul2d<rest, execution_simdgroups<4>> op1;
    const int row0 = int(tgid.y) * TM, col0 = int(tgid.x) * TN;
    auto mC = C.slice(col0, row0);
    op0.run(A.slice(0, row0), B.slice(col0, 0), mC);
    for (int k = 32; k < K; k += 32) {
        op1.run(A.slice(k, row0), B.slice(col0, k), mC);
    }
    threadgroup_barrier(mem_flags::mem_device);
    // One thread per tile row sums it, through the slice's own indices.
    tensor<device float, dextents<int32_t, 2>, tensor_inline> R(rowsum, dextents<int32_t, 2>(N / TN, M));
    auto tile = R.slice(int(tgid.x), row0);
    auto global_rows = tile.slice(0, -row0);
    if (tid < uint(TM)) {
        float s = 0.0f;
        for (int j = 0; j < TN; j++) {
            s += mC(j, int(tid));
        }
        global_rows(0, row0 + int(tid)) = s;
    }
}
