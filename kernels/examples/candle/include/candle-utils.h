// Indexing helpers and limits shared by the candle-style kernels.
#pragma once
#include <metal_stdlib>
using namespace metal;

#define METAL_FUNC inline __attribute__((always_inline))

// the largest threadgroup the reductions are dispatched with
#define MAX_SHARED_MEM 1024

METAL_FUNC uint get_strided_index(
    uint idx,
    constant size_t &num_dims,
    constant size_t *dims,
    constant size_t *strides
) {
    uint strided_i = 0;
    for (uint d = 0; d < num_dims; d++) {
        uint dim_idx = num_dims - 1 - d;
        strided_i += (idx % dims[dim_idx]) * strides[dim_idx];
        idx /= dims[dim_idx];
    }
    return strided_i;
}
