#include <metal_stdlib>
#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
using namespace metal;
using namespace mpp::tensor_ops;

// tensor_index: a 6x5 tensor (6 columns, 5 rows) over a row-major buffer
// with 8 floats per row. Thread i reads element (i % 8, i / 8) of the 8x5
// grid around it: inside the tensor its value, outside (column 6 or 7)
// zero. out[40 + r] are the extents, strides and rank; thread 0 stores
// out of bounds, which must change nothing.
kernel void tensor_index(device float* buf [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint i [[thread_position_in_grid]])
{
    tensor<device float, dextents<int32_t, 2>, tensor_inline> t(buf, dextents<int32_t, 2>(6, 5), array<int32_t, 2>({1, 8}));
    int x = int(i % 8), y = int(i / 8);
    out[i] = t(x, y);
    if (i == 0) {
        t(6, 0) = 99.0f;   // column 6 is past the extent: dropped
        t(0, -1) = 99.0f;  // before the first row: dropped
        out[40] = float(t.get_extent(0));
        out[41] = float(t.get_extent(1));
        out[42] = float(t.get_stride(0));
        out[43] = float(t.get_stride(1));
        out[44] = float(t.get_rank());
        auto packed = tensor(out + 48, dextents<int32_t, 2>(4, 3));
        out[45] = float(packed.get_stride(1));
        packed(3, 2) = 7.0f;  // out[48 + 2 * 4 + 3]
        out[46] = t[array<int32_t, 2>({5, 4})];
    }
}

// tensor_slice: slices of an 8x8 row-major tensor. Thread i in 0..63
// reads (i % 8, i / 8) of: s, the slice at (2, 3) (dynamic extents 6x5:
// outside them or the parent, zero); w, a static 4x2 slice of s at (1,
// 1); back, s's slice at (-2, -3), the parent again; and neg, the slice at
// (0, -2), whose first two rows are before the parent's.
kernel void tensor_slice(device const float* buf [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         uint i [[thread_position_in_grid]])
{
    auto t = tensor(buf, dextents<int32_t, 2>(8, 8));
    auto s = t.slice(2, 3);
    auto w = s.slice<4, 2>(1, 1);
    auto back = s.slice(-2, -3);
    auto neg = t.slice(0, -2);
    int x = int(i % 8), y = int(i / 8);
    bool in_s = x < s.get_extent(0) && y < s.get_extent(1);
    bool in_w = x < int(w.get_extent(0)) && y < int(w.get_extent(1));
    out[i] = in_s ? s(x, y) : -1.0f;
    out[64 + i] = in_w ? w(x, y) : -1.0f;
    out[128 + i] = back(x, y);
    out[192 + i] = neg(x, y);
    if (i == 0) {
        out[256] = float(s.get_extent(0));
        out[257] = float(s.get_extent(1));
        out[258] = float(neg.get_extent(1));
        out[259] = float(back.get_extent(0));
    }
}

// coop_elements: a 16x8 = (16 x 24) * (24 x 8) product in half into a
// float cooperative tensor with one simd group, then per element: the
// value plus one, where it is (get_multidimensional_index), which lane
// holds it, and the iterator's order; then stored through store() into
// a tensor. The left operand is given transposed (24 x 16 row-major).
kernel void coop_elements(device const half* at [[buffer(0)]],
                          device const half* b [[buffer(1)]],
                          device float* d [[buffer(2)]],
                          device float* owner [[buffer(3)]],
                          device float* stored [[buffer(4)]],
                          device float* visits [[buffer(5)]],
                          uint lane [[thread_index_in_simdgroup]])
{
    auto A = tensor(at, dextents<int32_t, 2>(16, 24));  // A^T: 16 columns (m), 24 rows (k)
    auto B = tensor(b, dextents<int32_t, 2>(8, 24));
    constexpr auto desc = matmul2d_descriptor(16, 8, 24, true, false, false);
    matmul2d<desc, execution_simdgroup> op;
    auto c = op.get_destination_cooperative_tensor<decltype(A), decltype(B), float>();
    op.run(A, B, c);
    for (uint16_t e = 0; e < c.get_capacity(); e++) {
        if (!c.is_valid_element(e)) continue;
        auto idx = c.get_multidimensional_index(e);
        d[idx[1] * 8 + idx[0]] = c[e];
        owner[idx[1] * 8 + idx[0]] = float(lane * 100 + e);
        c[e] += 1.0f;
    }
    c.store(tensor(stored, dextents<int32_t, 2>(8, 16)));
    uint16_t n = 0;
    for (auto it = c.begin(); it != c.end(); ++it, ++n) {
        auto idx = it.get_multidimensional_index();
        visits[idx[1] * 8 + idx[0]] = float(n);
    }
}

// coop_thread: execution_thread, each thread its own whole 4x4 product
// of row-major 4x4 matrices (right operand transposed), accumulated onto
// a loaded destination (multiply_accumulate); thread i scales A by i+1.
kernel void coop_thread(device const float* a [[buffer(0)]],
                        device const float* bt [[buffer(1)]],
                        device const float* c0 [[buffer(2)]],
                        device float* d [[buffer(3)]],
                        uint i [[thread_position_in_grid]])
{
    float la[16];
    for (int j = 0; j < 16; j++) la[j] = a[j] * float(i + 1);
    auto A = tensor(la, dextents<int32_t, 2>(4, 4));
    auto B = tensor(bt, dextents<int32_t, 2>(4, 4));
    constexpr auto desc = matmul2d_descriptor(4, 4, 4, false, true, false, matmul2d_descriptor::mode::multiply_accumulate);
    matmul2d<desc, execution_thread> op;
    auto c = op.get_destination_cooperative_tensor<decltype(A), decltype(B), float>();
    c.load(tensor(c0, dextents<int32_t, 2>(4, 4)));
    op.run(A, B, c);
    c.store(tensor(d + 16 * i, dextents<int32_t, 2>(4, 4)));
}

// coop_shifted: a cooperative 8x8 destination (one simd group) holding
// each element's own row-major index is stored through a slice at row
// offset -2 of a 6-row tensor, as a tile is stored through
// tO.slice(0, -row * IH): rows 0 and 1 fall before the tensor and are
// dropped, row y lands on row y - 2. It is then loaded back through the
// same slice (rows 0 and 1 read zero), plus 0.5, and stored whole.
kernel void coop_shifted(device const float* a [[buffer(0)]],
                         device float* shifted [[buffer(1)]],
                         device float* reloaded [[buffer(2)]])
{
    auto A = tensor(a, dextents<int32_t, 2>(8, 8));
    constexpr auto desc = matmul2d_descriptor(8, 8, 8);
    matmul2d<desc, execution_simdgroup> op;
    auto c = op.get_destination_cooperative_tensor<decltype(A), decltype(A), float>();
    for (uint16_t e = 0; e < c.get_capacity(); e++) {
        auto idx = c.get_multidimensional_index(e);
        if (c.is_valid_element(e)) c[e] = float(idx[1] * 8 + idx[0]);
    }
    auto tO = tensor(shifted, dextents<int32_t, 2>(8, 6));
    c.store(tO.slice(0, -2));
    simdgroup_barrier(mem_flags::mem_device);
    c.load(tO.slice(0, -2));
    for (auto it = c.begin(); it != c.end(); ++it) *it += 0.5f;
    c.store(tensor(reloaded, dextents<int32_t, 2>(8, 8)));
}
