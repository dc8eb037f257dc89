// corpus_ggml.metal: kernels in the style of ggml's Metal backend, for the
// barrier proofs' property test. kernel_mul_mm multiplies 16x16 blocks
// with four SIMD groups ((32, 4) threads), staging A and B through one
// threadgroup(0) byte buffer carved with casts, and writes the output
// tile through the same memory with simdgroup_store before every thread
// copies it out. kernel_norm is templated over the element type and
// reads its row through a C-style cast of a byte pointer.
#include <metal_stdlib>
using namespace metal;

typedef struct {
    int32_t ne00;   // row length, in elements of T
    uint64_t nb01;  // row stride, in bytes
    float eps;
} ggml_kargs_norm;

typedef struct {
    int32_t M;
    int32_t N;
    int32_t K;
} ggml_kargs_mul_mm;

kernel void kernel_mul_mm(constant ggml_kargs_mul_mm &args [[buffer(0)]],
                          device const char *src0 [[buffer(1)]],
                          device const char *src1 [[buffer(2)]],
                          device char *dst [[buffer(3)]],
                          threadgroup char *shmem [[threadgroup(0)]],
                          uint3 tgpig [[threadgroup_position_in_grid]],
                          ushort tiitg [[thread_index_in_threadgroup]],
                          ushort sgitg [[simdgroup_index_in_threadgroup]])
{
    threadgroup float *sa = (threadgroup float *) (shmem);
    threadgroup float *sb = (threadgroup float *) (shmem + 512);
    device const float *A = (device const float *) src0;
    device const float *B = (device const float *) src1;
    const int r0 = tgpig.y * 16;
    const int c0 = tgpig.x * 16;
    const int sr = sgitg / 2;
    const int sc = sgitg % 2;
    simdgroup_float8x8 mc = make_filled_simdgroup_matrix<float, 8>(0.0f);
    for (int k = 0; k < args.K; k += 8) {
        sa[tiitg] = A[(r0 + tiitg / 8) * args.K + k + tiitg % 8];
        sb[tiitg] = B[(k + tiitg / 16) * args.N + c0 + tiitg % 16];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_float8x8 ma;
        simdgroup_float8x8 mb;
        simdgroup_load(ma, sa + sr * 64, 8);
        simdgroup_load(mb, sb + sc * 8, 16);
        simdgroup_multiply_accumulate(mc, ma, mb, mc);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    threadgroup float *temp = (threadgroup float *) shmem;
    simdgroup_store(mc, temp + sr * 8 * 16 + sc * 8, 16);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    device float *C = (device float *) dst;
    for (int i = tiitg; i < 256; i += 128) {
        C[(r0 + i / 16) * args.N + c0 + i % 16] = temp[i];
    }
}

// The same tile written out with the SIMD group from the thread's second
// position (ggml dispatches (32, nsg) threads and reads tpitg.y).
kernel void kernel_mul_mm_2d(constant ggml_kargs_mul_mm &args [[buffer(0)]],
                             device const char *src0 [[buffer(1)]],
                             device const char *src1 [[buffer(2)]],
                             device char *dst [[buffer(3)]],
                             threadgroup char *shmem [[threadgroup(0)]],
                             uint3 tgpig [[threadgroup_position_in_grid]],
                             ushort2 tpitg [[thread_position_in_threadgroup]])
{
    threadgroup float *sa = (threadgroup float *) (shmem);
    threadgroup float *sb = (threadgroup float *) (shmem + 512);
    device const float *A = (device const float *) src0;
    device const float *B = (device const float *) src1;
    const int tid = tpitg.y * 32 + tpitg.x;
    const int r0 = tgpig.y * 16;
    const int c0 = tgpig.x * 16;
    const int sr = tpitg.y / 2;
    const int sc = tpitg.y % 2;
    simdgroup_float8x8 mc = make_filled_simdgroup_matrix<float, 8>(0.0f);
    for (int k = 0; k < args.K; k += 8) {
        sa[tid] = A[(r0 + tid / 8) * args.K + k + tid % 8];
        sb[tid] = B[(k + tid / 16) * args.N + c0 + tid % 16];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_float8x8 ma;
        simdgroup_float8x8 mb;
        simdgroup_load(ma, sa + sr * 64, 8);
        simdgroup_load(mb, sb + sc * 8, 16);
        simdgroup_multiply_accumulate(mc, ma, mb, mc);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    threadgroup float *temp = (threadgroup float *) shmem;
    simdgroup_store(mc, temp + sr * 8 * 16 + sc * 8, 16);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    device float *C = (device float *) dst;
    C[(r0 + tid / 16) * args.N + c0 + tid % 16] = temp[tid];
    C[(r0 + 8 + tid / 16) * args.N + c0 + tid % 16] = temp[128 + tid];
}

template <typename T>
kernel void kernel_norm(constant ggml_kargs_norm &args [[buffer(0)]],
                        device const char *src0 [[buffer(1)]],
                        device char *dst [[buffer(2)]],
                        threadgroup float *shmem_f32 [[threadgroup(0)]],
                        uint tgpig [[threadgroup_position_in_grid]],
                        ushort tpitg [[thread_position_in_threadgroup]],
                        ushort sgitg [[simdgroup_index_in_threadgroup]],
                        ushort tiisg [[thread_index_in_simdgroup]],
                        ushort ntg [[threads_per_threadgroup]])
{
    if (sgitg == 0) {
        shmem_f32[tiisg] = 0.0f;
    }
    device const T *x = (device const T *) (src0 + tgpig * args.nb01);
    float sumf = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        sumf += float(x[i00]);
    }
    sumf = simd_sum(sumf);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        shmem_f32[sgitg] = sumf;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sumf = shmem_f32[tiisg];
    sumf = simd_sum(sumf);
    const float mean = sumf / args.ne00;
    device T *y = (device T *) (dst + tgpig * args.nb01);
    sumf = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        y[i00] = T(float(x[i00]) - mean);
        sumf += float(y[i00]) * float(y[i00]);
    }
    sumf = simd_sum(sumf);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        shmem_f32[sgitg] = sumf;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sumf = shmem_f32[tiisg];
    sumf = simd_sum(sumf);
    const float scale = 1.0f / sqrt(sumf / args.ne00 + args.eps);
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        y[i00] = T(float(y[i00]) * scale);
    }
}

template [[host_name("kernel_norm_f32")]] kernel void kernel_norm<float>(
    constant ggml_kargs_norm &args, device const char *src0, device char *dst, threadgroup float *shmem_f32,
    uint tgpig, ushort tpitg, ushort sgitg, ushort tiisg, ushort ntg);

constant float nibble_table[16] = {-8.0f, -6.5f, -5.0f, -3.75f, -2.5f, -1.5f, -0.75f, -0.25f,
                                   0.25f, 0.75f, 1.5f, 2.5f, 3.75f, 5.0f, 6.5f, 8.0f};

// Dequantisation of packed nibbles as ggml's iq4 helpers do it: a byte view
// of a local word that every iteration rewrites. The table's subscripts
// read through the view, so neither they nor the loads are invariant.
kernel void kernel_dequant_nibbles(device const uint *qw [[buffer(0)]],
                                   device float *dq [[buffer(1)]],
                                   uint tid [[thread_position_in_grid]])
{
    uint word;
    thread const uchar *nib = (thread const uchar *)&word;
    const float d = 0.5f + float(tid % 7);
    for (int i = 0; i < 4; ++i) {
        word = (qw[4 * tid + i] >> 4 * (tid % 2)) & 0x0f0f0f0fu;
        dq[16 * tid + 4 * i + 0] = d * nibble_table[nib[0]];
        dq[16 * tid + 4 * i + 1] = d * nibble_table[nib[1]];
        const uchar n2 = nib[2];
        dq[16 * tid + 4 * i + 2] = d * nibble_table[n2];
        dq[16 * tid + 4 * i + 3] = d * nibble_table[nib[3]];
    }
}
