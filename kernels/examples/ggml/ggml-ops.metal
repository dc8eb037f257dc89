// Row reductions, normalisation, softmax, argmax and a quantised mat-vec
// written the way ggml's Metal backend writes its kernels: the shared block
// formats and kernel arguments come from two headers (pass
// -I kernels/examples/ggml/include), loops are unrolled by a FOR_UNROLL
// macro, function constants sit at indices named by macros, and template
// kernels are instantiated by host_name, one of them through a function
// pointer template parameter.
#define GGML_COMMON_DECL_METAL
#define GGML_COMMON_IMPL_METAL
#if defined(GGML_METAL_EMBED_LIBRARY)
__embed_ggml-common.h__
#else
#include "ggml-common.h"
#endif
#include "ggml-metal-impl.h"

#include <metal_stdlib>

using namespace metal;

// function constants, at indices the implementation header names
constant bool FC_rms_norm_scale [[function_constant(FC_RMS_NORM + 0)]];

// one row of src0 per threadgroup: dst[r] = sum(src0[r, :])
kernel void kernel_sum_rows_f32(
        constant ggml_metal_kargs_sum_rows & args,
        device const char * src0,
        device       char * dst,
        uint   tgpig[[threadgroup_position_in_grid]],
        ushort tpitg[[thread_position_in_threadgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort ntg[[threads_per_threadgroup]]) {
    threadgroup float shmem_f32[N_SIMDWIDTH];

    device const float * x = (device const float *) (src0 + tgpig*args.nb01);

    float sumf = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        sumf += x[i00];
    }
    sumf = simd_sum(sumf);

    if (sgitg == 0) {
        shmem_f32[tiisg] = 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    if (tiisg == 0) {
        shmem_f32[sgitg] = sumf;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    sumf = simd_sum(shmem_f32[tiisg]);
    if (tpitg == 0) {
        device float * y = (device float *) dst;
        y[tgpig] = sumf;
    }
}

// dst = x / sqrt(mean(x^2) + eps), one row per threadgroup; the host sizes
// the scratch buffer (one float per simdgroup)
kernel void kernel_rms_norm_f32(
        constant ggml_metal_kargs_rms_norm & args,
        device const char * src0,
        device       char * dst,
        threadgroup float * shmem_f32 [[threadgroup(0)]],
        uint   tgpig[[threadgroup_position_in_grid]],
        ushort tpitg[[thread_position_in_threadgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort ntg[[threads_per_threadgroup]]) {
    if (sgitg == 0) {
        shmem_f32[tiisg] = 0.0f;
    }

    device const float4 * x = (device const float4 *) (src0 + tgpig*args.nb01);

    float sumf = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00_4; i00 += ntg) {
        sumf += dot(x[i00], x[i00]);
    }
    sumf = simd_sum(sumf);

    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        shmem_f32[sgitg] = sumf;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    sumf = simd_sum(shmem_f32[tiisg]);

    const float mean  = sumf/args.ne00;
    const float scale = 1.0f/sqrt(mean + args.eps);

    device float4 * y = (device float4 *) (dst + tgpig*args.nb01);
    for (int i00 = tpitg; i00 < args.ne00_4; i00 += ntg) {
        y[i00] = FC_rms_norm_scale ? x[i00] * scale : x[i00];
    }
}

// numerically stable softmax of one row per threadgroup
template <typename T>
kernel void kernel_soft_max(
        constant ggml_metal_kargs_soft_max & args,
        device const char * src0,
        device       char * dst,
        uint   tgpig[[threadgroup_position_in_grid]],
        ushort tpitg[[thread_position_in_threadgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort ntg[[threads_per_threadgroup]]) {
    threadgroup float buf[N_SIMDWIDTH];

    device const T * psrc0 = (device const T *) (src0 + tgpig*args.nb01);
    device       T * pdst  = (device       T *) (dst  + tgpig*args.nb01);

    // parallel max
    float lmax = -INFINITY;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        lmax = max(lmax, (float) psrc0[i00]*args.scale);
    }
    float max_val = simd_max(lmax);
    if (sgitg == 0) {
        buf[tiisg] = -INFINITY;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        buf[sgitg] = max_val;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    max_val = simd_max(buf[tiisg]);

    // parallel sum
    float lsum = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        const float exp_psrc0 = exp((float) psrc0[i00]*args.scale - max_val);
        lsum += exp_psrc0;
        pdst[i00] = (T) exp_psrc0;
    }
    threadgroup_barrier(mem_flags::mem_none);
    float sum = simd_sum(lsum);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sgitg == 0) {
        buf[tiisg] = 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        buf[sgitg] = sum;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sum = simd_sum(buf[tiisg]);

    const float inv_sum = 1.0f/sum;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        pdst[i00] = (T) ((float) pdst[i00] * inv_sum);
    }
}

typedef decltype(kernel_soft_max<float>) kernel_soft_max_t;

template [[host_name("kernel_soft_max_f32")]] kernel kernel_soft_max_t kernel_soft_max<float>;
template [[host_name("kernel_soft_max_f16")]] kernel kernel_soft_max_t kernel_soft_max<half>;

// index of the largest element of each row, one row per threadgroup
kernel void kernel_argmax_f32(
        constant ggml_metal_kargs_argmax & args,
        device const char * src0,
        device    int32_t * dst,
        uint   tgpig[[threadgroup_position_in_grid]],
        ushort tpitg[[thread_position_in_threadgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort ntg[[threads_per_threadgroup]]) {
    threadgroup float   shared_maxval[N_SIMDWIDTH];
    threadgroup int32_t shared_argmax[N_SIMDWIDTH];

    device const float * x_row = (device const float *) (src0 + tgpig*args.nb01);

    float   lmax = -INFINITY;
    int32_t larg = -1;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        if (x_row[i00] > lmax) {
            lmax = x_row[i00];
            larg = i00;
        }
    }

    // find the argmax in the simdgroup; among equal maxima the largest
    // index wins
    float max_val = simd_max(lmax);
    int32_t arg_val = simd_max(select(-1, larg, max_val == lmax));

    if (sgitg == 0) {
        shared_maxval[tiisg] = -INFINITY;
        shared_argmax[tiisg] = -1;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        shared_maxval[sgitg] = max_val;
        shared_argmax[sgitg] = arg_val;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    float   max_val_reduced = simd_max(shared_maxval[tiisg]);
    int32_t arg_val_reduced = simd_max(select(-1, shared_argmax[tiisg], max_val_reduced == shared_maxval[tiisg]));

    if (tpitg == 0) {
        dst[tgpig] = arg_val_reduced;
    }
}

// elementwise binary operations through a function pointer template parameter
inline float op_add(float a, float b) { return a + b; }
inline float op_mul(float a, float b) { return a * b; }
inline float op_max(float a, float b) { return max(a, b); }

template <float (*op)(float, float)>
kernel void kernel_binary_f32(
        device const float * src0,
        device const float * src1,
        device       float * dst,
        uint tpig[[thread_position_in_grid]]) {
    dst[tpig] = op(src0[tpig], src1[tpig]);
}

typedef decltype(kernel_binary_f32<op_add>) kernel_binary_t;

template [[host_name("kernel_add_f32")]] kernel kernel_binary_t kernel_binary_f32<op_add>;
template [[host_name("kernel_mul_f32")]] kernel kernel_binary_t kernel_binary_f32<op_mul>;
template [[host_name("kernel_max_f32")]] kernel kernel_binary_t kernel_binary_f32<op_max>;

// dst = src0 * src1 for q4_0 rows of src0: nr0 rows per simdgroup, nsg
// simdgroups per threadgroup, the partial sums combined in threadgroup memory
template <int nr0, int nsg>
kernel void kernel_mul_mv_q4_0_f32(
        constant ggml_metal_kargs_mul_mv & args,
        device const char  * src0,
        device const float * src1,
        device       float * dst,
        uint   tgpig[[threadgroup_position_in_grid]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]]) {
    threadgroup float partial[nr0][nsg];

    const int nb        = args.ne00/QK4_0;
    const int first_row = tgpig*nr0;

    float sumf[nr0];
    FOR_UNROLL (short row = 0; row < nr0; ++row) {
        sumf[row] = 0.0f;
    }

    for (int ib = sgitg*N_SIMDWIDTH + tiisg; ib < nb; ib += nsg*N_SIMDWIDTH) {
        device const float * y = src1 + ib*QK4_0;
        FOR_UNROLL (short row = 0; row < nr0; ++row) {
            if (first_row + row < args.ne01) {
                device const block_q4_0 * xb = (device const block_q4_0 *) (src0 + (first_row + row)*args.nb01) + ib;
                const float d = (float) xb->d;
                float acc = 0.0f;
                for (short j = 0; j < QK4_0/2; ++j) {
                    const uint8_t q = xb->qs[j];
                    acc += ((float) (q & 0x0F) - 8.0f)*y[j] + ((float) (q >> 4) - 8.0f)*y[j + QK4_0/2];
                }
                sumf[row] += d*acc;
            }
        }
    }

    FOR_UNROLL (short row = 0; row < nr0; ++row) {
        const float s = simd_sum(sumf[row]);
        if (tiisg == 0) {
            partial[row][sgitg] = s;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    if (sgitg == 0 && tiisg < nr0 && first_row + tiisg < args.ne01) {
        float s = 0.0f;
        for (short k = 0; k < nsg; ++k) {
            s += partial[tiisg][k];
        }
        dst[first_row + tiisg] = s;
    }
}

typedef decltype(kernel_mul_mv_q4_0_f32<N_R0_Q4_0, N_SG_Q4_0>) mul_mv_q4_0_t;

template [[host_name("kernel_mul_mv_q4_0_f32")]] kernel mul_mv_q4_0_t kernel_mul_mv_q4_0_f32<N_R0_Q4_0, N_SG_Q4_0>;
