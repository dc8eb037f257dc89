// Unary maps and row reductions written the way candle writes its Metal
// kernels: each kernel is the body of a #define, and one use of the macro
// per type makes the entry points. The indexing helpers and the shared
// memory limit come from a header (pass -I kernels/examples/candle/include).
#include <metal_stdlib>
#include "candle-utils.h"
using namespace metal;

#define UNARY(FN, TYPENAME, FN_NAME, FN_NAME_STRIDED) \
kernel void FN_NAME( \
    constant size_t &dim, \
    device const TYPENAME *input, \
    device TYPENAME *output, \
    uint tid [[ thread_position_in_grid ]] \
) { \
    if (tid >= dim) { \
        return; \
    } \
    output[tid] = TYPENAME(FN(float(input[tid]))); \
} \
kernel void FN_NAME_STRIDED( \
    constant size_t &dim, \
    constant size_t &num_dims, \
    constant size_t *dims, \
    constant size_t *strides, \
    device const TYPENAME *input, \
    device TYPENAME *output, \
    uint tid [[ thread_position_in_grid ]] \
) { \
    if (tid >= dim) { \
        return; \
    } \
    output[tid] = TYPENAME(FN(float(input[get_strided_index(tid, num_dims, dims, strides)]))); \
}

#define UNARY_OP(NAME) \
UNARY(NAME, float, NAME##_f32, NAME##_f32_strided); \
UNARY(NAME, half, NAME##_f16, NAME##_f16_strided);

template <typename T> METAL_FUNC T sqr(T in) { return in * in; }
template <typename T> METAL_FUNC T neg(T in) { return -in; }

UNARY_OP(sqrt)
UNARY_OP(exp)
UNARY(sqr, float, usqr_f32, usqr_f32_strided)
UNARY(neg, float, uneg_f32, uneg_f32_strided)

#define MAX(x, y) ((x) > (y) ? (x) : (y))

// one block of el_to_sum_per_block elements per threadgroup; x and y name
// the operands of FN
#define REDUCE(FN, NAME, T, START) \
kernel void NAME( \
    constant size_t &src_numel, \
    constant size_t &el_to_sum_per_block, \
    device const T *src, \
    device T *dst, \
    uint tid [[ thread_index_in_threadgroup ]], \
    uint dst_id [[ threadgroup_position_in_grid ]], \
    uint block_dim [[ threads_per_threadgroup ]] \
) { \
    threadgroup T shared_memory[MAX_SHARED_MEM]; \
    shared_memory[tid] = START; \
    size_t start_idx = dst_id * el_to_sum_per_block; \
    size_t stop_idx = min(start_idx + el_to_sum_per_block, src_numel); \
    size_t idx = start_idx + tid; \
    while (idx < stop_idx) { \
        T x = shared_memory[tid]; \
        T y = src[idx]; \
        shared_memory[tid] = FN; \
        idx += block_dim; \
    } \
    threadgroup_barrier(mem_flags::mem_threadgroup); \
    for (uint s = block_dim / 2; s > 0; s >>= 1) { \
        if (tid < s) { \
            T x = shared_memory[tid]; \
            T y = shared_memory[tid + s]; \
            shared_memory[tid] = FN; \
        } \
        threadgroup_barrier(mem_flags::mem_threadgroup); \
    } \
    if (tid == 0) { \
        dst[dst_id] = shared_memory[0]; \
    } \
}

REDUCE(x + y, fast_sum_f32, float, 0)
REDUCE(MAX(x, y), fast_max_f32, float, -HUGE_VALF)

// index of the largest element of each block: values and indices side by side
#define ARGMAX(NAME, T, MINVALUE) \
kernel void NAME( \
    constant size_t &src_numel, \
    constant size_t &el_to_sum_per_block, \
    device const T *src, \
    device uint *dst, \
    uint tid [[ thread_index_in_threadgroup ]], \
    uint dst_id [[ threadgroup_position_in_grid ]], \
    uint block_dim [[ threads_per_threadgroup ]] \
) { \
    threadgroup T shared_memory[MAX_SHARED_MEM]; \
    threadgroup uint shared_indices[MAX_SHARED_MEM]; \
    shared_memory[tid] = MINVALUE; \
    shared_indices[tid] = 0xFFFFFFFF; \
    bool notset = true; \
    size_t start_idx = dst_id * el_to_sum_per_block; \
    size_t stop_idx = min(start_idx + el_to_sum_per_block, src_numel); \
    size_t idx = start_idx + tid; \
    while (idx < stop_idx) { \
        if (notset || src[idx] > shared_memory[tid]) { \
            shared_memory[tid] = src[idx]; \
            shared_indices[tid] = idx % el_to_sum_per_block; \
            notset = false; \
        } \
        idx += block_dim; \
    } \
    threadgroup_barrier(mem_flags::mem_threadgroup); \
    for (uint s = block_dim / 2; s > 0; s >>= 1) { \
        if (tid < s && shared_memory[tid + s] > shared_memory[tid]) { \
            shared_indices[tid] = shared_indices[tid + s]; \
            shared_memory[tid] = shared_memory[tid + s]; \
        } \
        threadgroup_barrier(mem_flags::mem_threadgroup); \
    } \
    if (tid == 0) { \
        dst[dst_id] = shared_indices[0]; \
    } \
}

ARGMAX(fast_argmax_f32, float, -HUGE_VALF)
