// dot_kernel.cpp — a kernel in the form the translator emits: a dot
// product of half4 rows reduced with simd_sum and threadgroup memory. It
// also declares a namespace detail and a function swizzle at file scope,
// names a kernel file may use, to check that the prelude does not clash.
#include <metal_stdlib>
using namespace metal;

namespace detail {
inline float twice(float x) { return 2 * x; }
}  // namespace detail
inline float swizzle(float x) { return x; }

#line 1 "dot.metal"
struct Params {
  uint n;
  float scale;
};

typedef float mtl_tg0_t[2];
void dot_rows(const half4* a, const half4* b, float* out, const Params& p, uint tid, ushort lane, uint sg) {
  mtl_tg0_t& partial = *static_cast<mtl_tg0_t*>(mtl_rt::tg_slot(0));
  half4 x = a[tid], y = b[tid];
  half4 prod = x * y;
  half s = prod.x + prod.y + prod.z + prod.w;
  float total = simd_sum(float(s));
  if (lane == 0) partial[sg] = total;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (tid == 0) out[0] = detail::twice(swizzle(partial[0] + partial[1])) * p.scale;
  if (tid < p.n) out[1 + tid] = float(prod.wzyx().x);
}

static void mtl_run_dot_rows(void* const* buffers, void* const*) {
  const mtl_rt::ThreadCtx& c = mtl_rt::ctx();
  dot_rows(static_cast<const half4*>(buffers[0]), static_cast<const half4*>(buffers[1]), static_cast<float*>(buffers[2]),
           *static_cast<const Params*>(buffers[3]), uint(c.thread_position_in_grid[0]), ushort(c.thread_index_in_simdgroup),
           uint(c.simdgroup_index_in_threadgroup));
}
static const mtl_rt::TGSlot mtl_slots_dot_rows[] = {{0, sizeof(mtl_tg0_t), alignof(mtl_tg0_t), "partial"}};
static const mtl_rt::KernelInfo mtl_kernel_table[] = {{"dot_rows", mtl_run_dot_rows, 1, mtl_slots_dot_rows, 1024}};
extern "C" const mtl_rt::KernelInfo* mtl_kernels(int* count) {
  *count = 1;
  return mtl_kernel_table;
}
