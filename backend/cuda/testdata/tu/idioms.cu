// idioms.cu — the prelude's idioms (backend/cpu/prelude/testdata/idioms.cpp)
// in the shape of a cuda TU: every function device code, constants
// MTL_CONSTANT. Compiled, never run: it keeps the prelude compiling for
// the GPU (TestPreludeCompilesForDevice).
#include <metal_stdlib>
#include <simd/simd.h>

#include "mtl_cuda.h"

MTL_CUDA_BEGIN_SOURCE

MTL_CONSTANT constexpr half kScale = half(0.125);
MTL_CONSTANT constexpr float4 kOnes = float4(1.0f);
MTL_CONSTANT constexpr float2 kHalfOnes = float2(0.5f, 0.5f);
MTL_CONSTANT const float kArr[3] = {1.0f, 2.0f, 3.0f};
MTL_CONSTANT constexpr half kHalfArr[2] = {half(1.0), half(2.0)};
MTL_CONSTANT constexpr uint3 kDims = uint3(4, 8, 16);
constexpr int kSum = kDims.x + kDims.y;
static_assert(kSum == 12, "");

struct Shared { simd_float4 a; vector_uint2 b; matrix_float4x4 m; simd::half3 h; };
static_assert(sizeof(Shared) == 112, "");

struct Item { packed_float3 pos; float w; half2 uv; packed_half3 n; };
static_assert(sizeof(Item) == 28, "");

template <typename T> MTL_DEVICE T sq(T x) { return x * x; }
template <typename T, int N> MTL_DEVICE vec<T, N> twice(vec<T, N> v) { return v + v; }

MTL_DEVICE float f1(const float4* in, uint gid, uint2 pos, ushort lane, uint3 tg) {
  float4 v = in[gid];
  float4 acc = 0.0f;
  acc += v * 2.0f;
  acc = fma(v, float4(2), acc);
  acc.xy() += v.zw();
  float2 uv = float2(pos) / float2(16, 16);
  uint2 p2 = pos.yx() * 2u + uint2(1);
  int idx = int(pos.x) - 1;
  float m = max(acc.x, 0.0f) + min(acc.y, v.w);
  float s = simd_sum(acc.x) + simd_max(v.y) + simd_shuffle_xor(v.z, 1);
  s += simd_shuffle(v.w, ushort(lane ^ 2));
  s += simd_broadcast(v.w, 0);
  float3 n = normalize(v.xyz());
  float l = length(v.xy()) + distance(v.xy(), uv) + dot(n, float3(0, 0, 1));
  bool4 mask = v > 0.0f;
  float4 sel = select(float4(0), v, mask);
  float r = sel.x + (any(mask) ? 1.0f : 0.0f) + (all(mask) ? 1.0f : 0.0f);
  half h = half(v.x);
  half h2 = h * kScale + half(1.0);
  h2 = max(h2, half(0));
  half4 hv = half4(v);
  hv = hv * h2;
  hv.xy() = hv.yx();
  float hf = float(hv.x) + dot(float4(hv), v) + float(simd_sum(hv).y);
  uint bits = as_type<uint>(v.x);
  float back = as_type<float>(bits ^ 0x80000000u);
  uint2 u2 = as_type<uint2>(v.xy());
  half2 hp = as_type<half2>(bits);
  float ex = exp(v.x) + fast::exp(v.y) + precise::exp(v.z) + exp2(-v.w) + log(abs(v.x) + 1);
  float cl = clamp(v.x, 0.0f, 1.0f) + saturate(v.y) + mix(v.x, v.y, 0.5f) + step(0.5f, v.z) + smoothstep(0.0f, 1.0f, v.w);
  float4 cl4 = clamp(v, 0.0f, 1.0f) + mix(v, kOnes, 0.25f) + saturate(v) + floor(v) + fract(v) + sign(v) + rsqrt(abs(v) + 1.0f);
  int ii = clamp(idx, 0, 7) + abs(idx) + min(idx, 3) + max(idx, -3);
  uint uu = popcount(bits) + clz(bits) + ctz(bits | 1u) + min(bits, 7u) + extract_bits(bits, 3, 4);
  uint4 ub = uint4(p2, tg.xy());
  ub = ub >> 1u;
  ub &= uint4(0xff);
  int4 iv = int4(v) % 3;
  float t = float(ii) + float(uu) + float(ub.w) + float(iv.z) + float(u2.y) + float(hp.x) + back;
  t += sq(v.x) + twice(v.xy()).y + twice(float2(1)).x;
  t += kArr[lane % 3] + kHalfArr[0] + kHalfOnes.x;
  t += numeric_limits<float>::max() > 0 ? 1 : 0;
  t += INFINITY > 0 ? 0 : 1;
  t += float(HALF_MAX) * 0 + M_PI_F * 0 + FLT_EPSILON;
  t += isnan(v.x) ? 1 : 0;
  t += all(isfinite(v)) ? 0 : 1;
  t += float(metal::max(h, half(2))) + metal::precise::sqrt(2.0f);
  threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
  simdgroup_barrier(mem_flags::mem_none);
  return m + s + l + r + hf + ex + cl + cl4.x + t + h2;
}

MTL_DEVICE void f2(atomic_uint* counter, atomic_float* fsum, atomic_int* imax, volatile atomic_uint* vcount, uint gid) {
  uint old = atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
  atomic_fetch_add_explicit(fsum, 0.5f, memory_order_relaxed);
  atomic_fetch_max_explicit(imax, int(gid), memory_order_relaxed);
  atomic_store_explicit(vcount, old, memory_order_relaxed);
  uint v = atomic_load_explicit(vcount, memory_order_relaxed);
  (void)v;
}

MTL_DEVICE void f3(const half* a, const half* b, float* c, uint2 sgid) {
  simdgroup_half8x8 ma, mb;
  simdgroup_float8x8 mc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  simdgroup_load(ma, a, 64, ulong2(0, sgid.y * 8));
  simdgroup_load(mb, b, 64, ulong2(sgid.x * 8, 0), true);
  simdgroup_half8x8 mh;
  simdgroup_multiply(mh, ma, mb);
  simdgroup_float8x8 mf;
  simdgroup_multiply_accumulate(mf, mc, mc, mc);
  simdgroup_store(mf, c, 64, ulong2(sgid.x * 8, sgid.y * 8));
  float2 te = mf.thread_elements();
  mf.thread_elements()[0] = te.y;
}

MTL_DEVICE float f4(float4x4 m, float3x3 r, float4 v) {
  float4 w = m * v;
  float3 x = r * v.xyz();
  float4x4 mm = m * m;
  return w.x + x.y + mm[1][2] + transpose(m)[0].w;
}

constexpr half kSumHalf = half(1.0) + half(2.0) * 3;
static_assert(kSumHalf == 7.0f, "constexpr half arithmetic");
constexpr float4 kScaled = float4(1, 2, 3, 4) * 2.0f + 1.0f;
static_assert(kScaled.w == 9.0f && kScaled[1] == 5.0f, "constexpr vector arithmetic");

MTL_DEVICE float f5(atomic_bool* flag, half4 hv, uint2 u, float x, ushort lane) {
  atomic_store_explicit(flag, true, memory_order_relaxed);
  bool was = atomic_exchange_explicit(flag, false, memory_order_relaxed);
  bool now = atomic_load_explicit(flag, memory_order_relaxed);
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);
  half4 hs = simd_sum(hv) + simd_prefix_exclusive_sum(hv) + quad_shuffle(hv, 1) + simd_shuffle_down(hv, 4);
  uint2 us = simd_max(u) + simd_min(u) + quad_sum(u) + simd_or(u) + simd_broadcast_first(u);
  uint64_t m = (uint64_t)simd_ballot(x > 0);
  ulong m2 = ulong(simd_active_threads_mask());
  bool votes = simd_ballot(x > 1).any() || simd_all(x > 2) || quad_any(x > 3) || simd_is_first();
  quad_vote qv = quad_ballot(x > 0);
  float y = simd_shuffle_and_fill_down(x, 0.0f, ushort(2)) + simd_shuffle_rotate_up(x, lane & 3) + quad_prefix_inclusive_sum(x);
  return float(hs.x) + float(us.y) + float(m) + float(m2) + (votes ? 1 : 0) + float(uint64_t(qv)) + y + (was ? 1 : 0) + (now ? 1 : 0);
}

MTL_ENTRY void run(void* const* b, void* const*) {
  const mtl_rt::ThreadCtx& c = mtl_rt::ctx();
  uint g = c.thread_position_in_grid[0];
  ushort lane = ushort(c.thread_index_in_simdgroup);
  float* o = static_cast<float*>(b[0]);
  o[g] = f1(static_cast<const float4*>(b[1]), g, uint2(g, g), lane, uint3(1, 2, 3));
  f2(static_cast<atomic_uint*>(b[2]), static_cast<atomic_float*>(b[3]), static_cast<atomic_int*>(b[4]),
     static_cast<atomic_uint*>(b[2]), g);
  f3(static_cast<const half*>(b[5]), static_cast<const half*>(b[6]), o, uint2(0, 0));
  o[g] += f4(float4x4(1.0f), float3x3(2.0f), float4(o[g]));
  o[g] += f5(static_cast<atomic_bool*>(b[7]), half4(o[g]), uint2(g, 1), o[g], lane);
}
MTL_CUDA_END_SOURCE

MTL_CUDA_KERNEL(0, metal::mtl_src::run)

namespace {
const mtl_rt::KernelInfo kernels[] = {MTL_CUDA_KERNEL_INFO(0, "idioms", 0, nullptr, 0, nullptr)};
}  // namespace

MTL_CUDA_EXPORT(kernels)
