// corpus_grid.metal: two- and three-dimensional threadgroups, atomics and
// aliasing casts, in the styles of candle's and metal-flash-attention's
// kernels, for the barrier proofs' property test.
#include <metal_stdlib>
using namespace metal;

// A tile transposed through threadgroup memory with (TX, TY) threads: the
// barrier between the stores and the transposed loads is needed, the one
// after the device loads is not.
kernel void transpose_2d(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                         uint2 tpitg [[thread_position_in_threadgroup]],
                         uint2 ntg [[threads_per_threadgroup]],
                         uint2 tgpig [[threadgroup_position_in_grid]])
{
    threadgroup float tile[16][17];
    const uint base = (tgpig.y * 16 + tgpig.x) * 256;
    float v = in[base + tpitg.y * 16 + tpitg.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    tile[tpitg.y][tpitg.x] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[base + tpitg.y * 16 + tpitg.x] = tile[tpitg.x][tpitg.y];
}

// Three-dimensional threadgroups: each thread stores its element, reads
// it back (no other thread's), then reads its neighbour along z.
kernel void stencil_3d(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                       uint3 tpitg [[thread_position_in_threadgroup]],
                       uint3 ntg [[threads_per_threadgroup]],
                       uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[512];
    const uint i = (tpitg.z * ntg.y + tpitg.y) * ntg.x + tpitg.x;
    const uint n = ntg.x * ntg.y * ntg.z;
    float v = in[tg * n + i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s[i] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float own = s[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s[i] = own * 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint j = (((tpitg.z + 1) % ntg.z) * ntg.y + tpitg.y) * ntg.x + tpitg.x;
    out[tg * n + i] = own + s[j];
}

// A candle-style block reduction: partial sums per SIMD group through a
// float4 view of the shared array.
kernel void reduce_sum_f4(device const float *src [[buffer(0)]], device float *dst [[buffer(1)]],
                          uint tid [[thread_index_in_threadgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint tg [[threadgroup_position_in_grid]],
                          uint nt [[threads_per_threadgroup]])
{
    threadgroup float shared[128];
    threadgroup float4 *shared4 = (threadgroup float4 *) shared;
    float4 x = ((device const float4 *) src)[tg * nt + tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0) {
        shared4[sg] = float4(simd_sum(x.x), simd_sum(x.y), simd_sum(x.z), simd_sum(x.w));
    } else {
        simd_sum(x.x); simd_sum(x.y); simd_sum(x.z); simd_sum(x.w);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        float t = 0.0f;
        for (uint k = 0; k < nt / 32 * 4; ++k) {
            t += shared[k];
        }
        dst[tg] = t;
    }
}

// A histogram with threadgroup atomics.
kernel void histogram16(device const uint *in [[buffer(0)]], device uint *bins_out [[buffer(1)]],
                        uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]],
                        uint nt [[threads_per_threadgroup]])
{
    threadgroup atomic_uint bins[16];
    uint v = in[tg * nt + tid];
    if (tid < 16) {
        atomic_store_explicit(&bins[tid], 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&bins[v % 16], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid < 16) {
        bins_out[tg * 16 + tid] = atomic_load_explicit(&bins[tid], memory_order_relaxed);
    }
}

// An attention-style block: scores staged as floats in a byte buffer
// beside a half view of it, read by the other SIMD group through
// simdgroup matrices and written back through them.
kernel void attn_block(device const half *q [[buffer(0)]], device float *o [[buffer(1)]],
                       threadgroup char *smem [[threadgroup(0)]],
                       uint tid [[thread_index_in_threadgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]],
                       uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float *sq = (threadgroup float *) smem;
    threadgroup float *so = (threadgroup float *) (smem + 512);
    threadgroup half *sh = (threadgroup half *) (smem + 1024);
    half h0 = q[tg * 128 + tid], h1 = q[tg * 128 + 64 + tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sq[tid] = float(h0);
    sq[tid + 64] = float(h1);
    sh[tid] = h0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 mq;
    simdgroup_load(mq, sq + (sg ^ 1) * 64, 8);
    simdgroup_float8x8 mo;
    simdgroup_multiply(mo, mq, mq);
    simdgroup_store(mo, so + sg * 64, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    o[tg * 128 + tid] = so[127 - tid] + float(sh[tid ^ 1]);
    o[tg * 128 + 64 + tid] = so[tid];
}
