// parity.cu — the kernels of parity.inc as a cuda TU, in the shape
// mtl_cuda.h describes (what the translator's CUDA target emits).
#include <metal_stdlib>

#include "mtl_cuda.h"

#define TG_DECL(T, name, slot) MTL_THREADGROUP(T, name)

MTL_CUDA_BEGIN_SOURCE
#include "parity.inc"
MTL_CUDA_END_SOURCE

MTL_CUDA_KERNEL(scalars, metal::mtl_src::run_scalars)
MTL_CUDA_KERNEL(vectors, metal::mtl_src::run_vectors)
MTL_CUDA_KERNEL(integers, metal::mtl_src::run_integers)
MTL_CUDA_KERNEL(simd, metal::mtl_src::run_simd)
MTL_CUDA_KERNEL_BOUNDED(reduce, metal::mtl_src::run_reduce, 64)
MTL_CUDA_KERNEL(atomics, metal::mtl_src::run_atomics)
MTL_CUDA_KERNEL(matrix, metal::mtl_src::run_matrix)
MTL_CUDA_KERNEL(positions, metal::mtl_src::run_positions)
MTL_CUDA_KERNEL(transcendentals, metal::mtl_src::run_transcendentals)

namespace {
typedef float reduce_partial_t[64];
const mtl_rt::TGSlot reduce_slots[] = {{0, sizeof(reduce_partial_t), alignof(reduce_partial_t), "partial", 4, 1, {64}}};
const mtl_rt::BufferParam io_bufs[] = {{0, "in", 0, 4}, {1, "out", 1, 4}};

const mtl_rt::KernelInfo kernels[] = {
    MTL_CUDA_KERNEL_INFO(scalars, "scalars", 0, nullptr, 2, io_bufs),
    MTL_CUDA_KERNEL_INFO(vectors, "vectors", 0, nullptr, 2, io_bufs),
    MTL_CUDA_KERNEL_INFO(integers, "integers", 0, nullptr, 2, io_bufs),
    MTL_CUDA_KERNEL_INFO(simd, "simd", 0, nullptr, 2, io_bufs),
    MTL_CUDA_KERNEL_INFO(reduce, "reduce", 1, reduce_slots, 2, io_bufs, 64),
    MTL_CUDA_KERNEL_INFO(atomics, "atomics", 0, nullptr, 2, io_bufs),
    MTL_CUDA_KERNEL_INFO(matrix, "matrix", 0, nullptr, 2, io_bufs),
    MTL_CUDA_KERNEL_INFO(positions, "positions", 0, nullptr, 0, nullptr),
    MTL_CUDA_KERNEL_INFO(transcendentals, "transcendentals", 0, nullptr, 2, io_bufs),
};
}  // namespace

MTL_CUDA_EXPORT(kernels)
