// ggml_norm.metal: row sums and RMS norm written the way ggml's Metal
// backend writes them (kernel_sum_rows_f32, kernel_rms_norm_f32): rows
// addressed through byte strides, each simd group reduces with simd_sum,
// lane 0 publishes shmem_f32[sgitg], and after a barrier every simd group
// reads shmem_f32[tiisg] and simd_sums again. Simd group 0 zeroes the
// array first, so lanes past the last simd group read zeros.
//
// Every threadgroup_barrier carries a `drop:` comment: what the checking
// mode must report when that barrier alone is removed (see
// check/trust_test.go).
#include <metal_stdlib>
using namespace metal;

#define N_SIMDWIDTH 32

typedef struct {
    int32_t  ne00;   // row length
    int32_t  ne00_4; // row length in float4
    uint64_t nb01;   // row stride in bytes
    float    eps;
} kargs_norm;

// one row of src0 per threadgroup: dst[r] = sum(src0[r, :])
kernel void kernel_sum_rows_f32(
        constant kargs_norm & args [[buffer(0)]],
        device const char * src0   [[buffer(1)]],
        device       char * dst    [[buffer(2)]],
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
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (lane 0 of simd group k writes shmem_f32[k] below while lane k of simd group 0 zeroes it)

    if (tiisg == 0) {
        shmem_f32[sgitg] = sumf;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (every simd group reads shmem_f32[k], which lane 0 of simd group k writes just above)

    sumf = simd_sum(shmem_f32[tiisg]);
    if (tpitg == 0) {
        device float * y = (device float *) dst;
        y[tgpig] = sumf;
    }
}

// dst = x / sqrt(mean(x^2) + eps), one row per threadgroup. As in ggml,
// simd group 0 zeroes the scratch array before the row is read, and the
// first barrier comes only after the simd_sum: a simd_sum orders the lanes
// of its own simd group, never two simd groups.
kernel void kernel_rms_norm_f32(
        constant kargs_norm & args [[buffer(0)]],
        device const char * src0   [[buffer(1)]],
        device       char * dst    [[buffer(3)]],
        uint   tgpig[[threadgroup_position_in_grid]],
        ushort tpitg[[thread_position_in_threadgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort ntg[[threads_per_threadgroup]]) {
    threadgroup float shmem_f32[N_SIMDWIDTH];

    if (sgitg == 0) {
        shmem_f32[tiisg] = 0.0f;
    }

    device const float4 * x = (device const float4 *) (src0 + tgpig*args.nb01);

    float sumf = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00_4; i00 += ntg) {
        sumf += dot(x[i00], x[i00]);
    }
    sumf = simd_sum(sumf);

    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (the zeroing above and lane 0's write below meet on shmem_f32[k] from simd groups 0 and k; the simd_sum between orders neither)
    if (tiisg == 0) {
        shmem_f32[sgitg] = sumf;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (every simd group reads shmem_f32[k], which lane 0 of simd group k writes just above)

    sumf = simd_sum(shmem_f32[tiisg]);

    const float mean  = sumf/args.ne00;
    const float scale = 1.0f/sqrt(mean + args.eps);

    device float4 * y = (device float4 *) (dst + tgpig*args.nb01);
    for (int i00 = tpitg; i00 < args.ne00_4; i00 += ntg) {
        y[i00] = x[i00] * scale;
    }
}
