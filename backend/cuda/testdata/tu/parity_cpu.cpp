// parity_cpu.cpp — the kernels of parity.inc as a cpu backend TU (the
// mtl_rt.h ABI of backend/cpu/runtime), for TestParity's comparison with
// parity.cu on the GPU.
#include <metal_stdlib>

#define MTL_DEVICE
#define MTL_CONSTANT
#define MTL_ENTRY static
#define TG_DECL(T, name, slot) T& name = *static_cast<T*>(mtl_rt::tg_slot(slot))

namespace metal {
namespace mtl_src {
using namespace ::metal;
#include "parity.inc"
}  // namespace mtl_src
}  // namespace metal

namespace {
using namespace metal::mtl_src;
typedef float reduce_partial_t[64];
typedef metal::atomic_uint counter_t[1];
const mtl_rt::TGSlot reduce_slots[] = {{0, sizeof(reduce_partial_t), alignof(reduce_partial_t), "partial", 4, 1, {64}}};
const mtl_rt::TGSlot atomics_slots[] = {{1, sizeof(counter_t), alignof(counter_t), "counter", 4, 1, {1}}};
const mtl_rt::BufferParam io_bufs[] = {{0, "in", 0, 4}, {1, "out", 1, 4}};

const mtl_rt::KernelInfo kernels[] = {
    {"scalars", run_scalars, 0, nullptr, 1024, 2, io_bufs},
    {"vectors", run_vectors, 0, nullptr, 1024, 2, io_bufs},
    {"integers", run_integers, 0, nullptr, 1024, 2, io_bufs},
    {"simd", run_simd, 0, nullptr, 1024, 2, io_bufs},
    {"reduce", run_reduce, 1, reduce_slots, 64, 2, io_bufs},
    {"atomics", run_atomics, 1, atomics_slots, 1024, 2, io_bufs},
    {"matrix", run_matrix, 0, nullptr, 1024, 2, io_bufs},
    {"positions", run_positions, 0, nullptr, 1024, 0, nullptr},
    {"transcendentals", run_transcendentals, 0, nullptr, 1024, 2, io_bufs},
};
}  // namespace

extern "C" const mtl_rt::KernelInfo* mtl_kernels(int* count) {
  *count = int(sizeof kernels / sizeof kernels[0]);
  return kernels;
}
