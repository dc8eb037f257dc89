// corpus_mlx.metal: kernels in the style of MLX's normalisation kernels,
// for the barrier proofs' property test. layer_norm calls the
// threadgroup_sum helper twice on one threadgroup buffer; the helper's
// first barrier separates the second call's store of xs[sg] from the
// first call's loads of xs[lane], which a proof inside the helper cannot
// see. initialize_buffer ends in a barrier that the first call's store
// needs. N_READS is a template parameter fixed by the instantiations.
#include <metal_stdlib>
using namespace metal;

inline void initialize_buffer(threadgroup float *xs, uint simd_lane_id, uint simd_group_id)
{
    if (simd_group_id == 0) {
        xs[simd_lane_id] = 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

inline float threadgroup_sum(float x, threadgroup float *xs, uint simd_lane_id, uint simd_group_id)
{
    x = simd_sum(x);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (simd_lane_id == 0) {
        xs[simd_group_id] = x;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    x = xs[simd_lane_id];
    x = simd_sum(x);
    return x;
}

template <typename T, int N_READS>
[[kernel]] void layer_norm(const device T *x [[buffer(0)]],
                           device T *out [[buffer(1)]],
                           constant uint &axis_size [[buffer(2)]],
                           uint gid [[threadgroup_position_in_grid]],
                           uint lid [[thread_position_in_threadgroup]],
                           uint lsize [[threads_per_threadgroup]],
                           uint simd_lane_id [[thread_index_in_simdgroup]],
                           uint simd_group_id [[simdgroup_index_in_threadgroup]])
{
    threadgroup float local_sums[32];
    initialize_buffer(local_sums, simd_lane_id, simd_group_id);
    x += gid * size_t(axis_size);
    out += gid * size_t(axis_size);

    float sumx = 0.0f;
    for (uint r = 0; r < axis_size; r += lsize * N_READS) {
        for (int i = 0; i < N_READS; i++) {
            if (r + lid * N_READS + i < axis_size) {
                sumx += float(x[r + lid * N_READS + i]);
            }
        }
    }
    float mean = threadgroup_sum(sumx, local_sums, simd_lane_id, simd_group_id) / float(axis_size);

    float sumv = 0.0f;
    for (uint r = 0; r < axis_size; r += lsize * N_READS) {
        for (int i = 0; i < N_READS; i++) {
            if (r + lid * N_READS + i < axis_size) {
                float d = float(x[r + lid * N_READS + i]) - mean;
                sumv += d * d;
            }
        }
    }
    float variance = threadgroup_sum(sumv, local_sums, simd_lane_id, simd_group_id) / float(axis_size);
    float rs = metal::precise::rsqrt(variance + 1e-5f);

    for (uint r = 0; r < axis_size; r += lsize * N_READS) {
        for (int i = 0; i < N_READS; i++) {
            if (r + lid * N_READS + i < axis_size) {
                out[r + lid * N_READS + i] = T((float(x[r + lid * N_READS + i]) - mean) * rs);
            }
        }
    }
}

template [[host_name("layer_norm_float32")]] [[kernel]] void layer_norm<float, 4>(
    const device float *x [[buffer(0)]], device float *out [[buffer(1)]], constant uint &axis_size [[buffer(2)]],
    uint gid [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]],
    uint lsize [[threads_per_threadgroup]], uint simd_lane_id [[thread_index_in_simdgroup]],
    uint simd_group_id [[simdgroup_index_in_threadgroup]]);

// rms_norm keeps one partial per SIMD group, published and read back in
// one function; the barrier after the reads guards the buffer's reuse for
// the scale.
[[kernel]] void rms_norm(const device float *x [[buffer(0)]],
                         device float *out [[buffer(1)]],
                         constant uint &axis_size [[buffer(2)]],
                         uint gid [[threadgroup_position_in_grid]],
                         uint lid [[thread_index_in_threadgroup]],
                         uint lsize [[threads_per_threadgroup]],
                         uint simd_lane_id [[thread_index_in_simdgroup]],
                         uint simd_group_id [[simdgroup_index_in_threadgroup]])
{
    threadgroup float partial[32];
    threadgroup float scale[1];
    if (simd_group_id == 0) {
        partial[simd_lane_id] = 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    x += gid * size_t(axis_size);
    out += gid * size_t(axis_size);
    float acc = 0.0f;
    for (uint i = lid; i < axis_size; i += lsize) {
        acc += x[i] * x[i];
    }
    acc = simd_sum(acc);
    if (simd_lane_id == 0) {
        partial[simd_group_id] = acc;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (simd_group_id == 0) {
        float t = simd_sum(partial[simd_lane_id]);
        if (simd_lane_id == 0) {
            scale[0] = metal::precise::rsqrt(t / float(axis_size) + 1e-5f);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = scale[0];
    for (uint i = lid; i < axis_size; i += lsize) {
        out[i] = x[i] * s;
    }
}
