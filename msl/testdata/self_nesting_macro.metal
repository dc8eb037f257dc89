//a utils
// header from a subdirectory, METAL_FUNC and MLX_MTL_PRAGMA_UNROLL, functor
// structs called through template parameters, instantiate_kernel macros
// with __VA_ARGS__, metal:: calls and type traits.
#include<metal_p>
#include<metal_stdlib>

include "mlx/utils.h"

using namespace metal;

#define instantiate_kernel(name, func, ...) \
  template [[host_name(                     \
      name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

struct Add {
  template <typename T>
  T operator()(T x, T y) {
    return x + y;
  }
};

struct Maximum {
  template <typename T>
  METAL_FUNC T operator()(T x, T y) {
    if (metal::isnan(float(x))) {
      return x;
    }
    return x > y ? x : y;
  }
};

struct Divide {
  template <typename T>
  T operator()(T x, T y) {
    return x / y;
  }
};

template <typename T, typename U, typename Op>
[[kernel]] void binary_ss(
    device const T* a,
    device const T* b,
    device U* c,
    uint index [[thread_position_in_grid]]) {
  c[index] = Op()(a[0], b[0]);
}

template <typename T, typename U, typename Op, int N = 4>
[[kernel]] void binary_vv(
    device const T* a,
    device const T* b,
    device U* c,
    constant uint& size,
    uint index [[thread_position_in_grid]]) {
  index *= N;
  if (N > 1 && index + N > size) {
    for (int i = 0; index + i < size; ++i) {
      c[index + i] = Op()(a[index + i], b[index + i]);
    }
  } else {
    MLX_MTL_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) {
      c[index + i] = Op()(a[index + i], b[index + i]);
    }
  }
}

template <typename T, typename U, typename Op, typename IdxT = int64_t>
[[kernel]] void binary_g(
    device const T* a,
    device const T* b,
    device U* c,
    constant const int* shape,
    constant const int64_t* a_strides,
    constant const int64_t* b_strides,
    constant const int& ndim,
    uint3 index [[thread_position_in_grid]],
    uint3 grid_dim [[threads_per_grid]]) {
  auto a_idx = elem_to_loc<IdxT>(index.x, shape, a_strides, ndim);
  auto b_idx = elem_to_loc<IdxT>(index.x, shape, b_strides, ndim);
  size_t out_idx = index.x + grid_dim.x * (index.y + size_t(grid_dim.y) * index.z);
  c[out_idx] = Op()(a[a_idx], b[b_idx]);
}

#define instantiate_binary_all(op, tname, itype, otype)                  \
  instantiate_kernel("ss_" #op #tname, binary_ss, itype, otype, op)      \
  instantiate_kernel("vv_" #op #tname, binary_vv, itype, otype, op)      \
  instantiate_kernel("gn_" #op #tname, binary_g, itype, otype, op, int)

#define instantiate_binary_float(op)                    \
  instantiate_binary_all(op, float16, half, half)       \
  instantiate_binary_all(op, float32, float, float)

instantiate_binary_float(Add)
instantiate_binary_float(Maximum)
instantiate_binary_float(Divide)

template <typename T, typename AccT = float, int N_READS = SOFTMAX_N_READS>
[[kernel]] void softmax_single_row(
    const device T* in,
    device T* out,
    constant int& axis_size,
    threadgroup AccT* local_max [[threadgroup(0)]],
    threadgroup AccT* local_normalizer [[threadgroup(1)]],
    uint gid [[threadgroup_position_in_grid]],
    uint _lid [[thread_position_in_threadgroup]],
    uint simd_lane_id [[thread_index_in_simdgroup]],
    uint simd_group_id [[simdgroup_index_in_threadgroup]]) {
  int lid = _lid;

  constexpr int SIMD_SIZE = 32;

  AccT ld[N_READS];

  in += gid * size_t(axis_size) + lid * N_READS;
  if (lid * N_READS + N_READS <= axis_size) {
    for (int i = 0; i < N_READS; i++) {
      ld[i] = AccT(in[i]);
    }
  } else {
    for (int i = 0; i < N_READS; i++) {
      ld[i] = ((lid * N_READS + i) < axis_size) ? AccT(in[i])
                                                : Limits<AccT>::min;
    }
  }
  if (simd_group_id == 0) {
    local_max[simd_lane_id] = Limits<AccT>::min;
    local_normalizer[simd_lane_id] = 0;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);

  // Get the max
  AccT maxval = Limits<AccT>::finite_min;
  for (int i = 0; i < N_READS; i++) {
    maxval = (maxval < ld[i]) ? ld[i] : maxval;
  }
  maxval = simd_max(maxval);
  if (simd_lane_id == 0) {
    local_max[simd_group_id] = maxval;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_group_id == 0) {
    maxval = simd_max(local_max[simd_lane_id]);
    if (simd_lane_id == 0) {
      local_max[0] = maxval;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  maxval = local_max[0];

  // Compute exp(x_i - maxval) and store the partial sums in local_normalizer
  AccT normalizer = 0;
  for (int i = 0; i < N_READS; i++) {
    AccT exp_x = fast::exp(ld[i] - maxval);
    ld[i] = exp_x;
    normalizer += exp_x;
  }
  normalizer = simd_sum(normalizer);
  if (simd_lane_id == 0) {
    local_normalizer[simd_group_id] = normalizer;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_group_id == 0) {
    normalizer = simd_sum(local_normalizer[simd_lane_id]);
    if (simd_lane_id == 0) {
      local_normalizer[0] = normalizer;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  normalizer = 1 / local_normalizer[0];

  // Normalize and write to the output
  out += gid * size_t(axis_size) + lid * N_READS;
  if (lid * N_READS + N_READS <= axis_size) {
    for (int i = 0; i < N_READS; i++) {
      out[i] = T(ld[i] * normalizer);
    }
  } else {
    for (int i = 0; i < N_READS; i++) {
      if ((lid * N_READS + i) < axis_size) {
        out[i] = T(ld[i] * normalizer);
      }
    }
  }oid)SIMD_SIZE;
}

#define instantiate_softmax(name, itype)                                 \
  instantiate_kernel("block_softmax_" #name, softmax_single_row, itype) \
  instantiate_kernel("block_softmax_precise_" #name, softmax_single_row, itype, float)

instantiate_softmax(float32, float)
instantiate_softmax(float16, half)

template <typename T, int BM, int BK>
struct BlockLoader {
  MLX_MTL_CONST short n_reads = (BM * BK) / 32;
  const device T* src;
  threadgroup T* dst;

  METAL_FUNC BlockLoader(const device T* src_, threadgroup T* dst_)
      : src(src_), dst(dst_) {}

  METAL_FUNC void load_unsafe() const {
    MLX_MTL_PRAGMA_UNROLL
    for (short i = 0; i < n_reads; i++) {
      dst[i] = src[i];
    }
  }
};

template <typename T>
[[kernel]] void copy_tile(
    const device T* src [[buffer(0)]],
    device T* out [[buffer(1)]],
    threadgroup T* tile [[threadgroup(0)]],
    uint lid [[thread_index_in_threadgroup]]) {
  BlockLoader<T, 8, 32> loader(src, tile);
  loader.load_unsafe();
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = static_cast<T>(log1p(float(tile[lid]))) + simd_shuffle_down(tile[lid], 1);
  out[lid] += T(ceildiv(lid, 4u)) + T(is_half_or_bfloat<T>::value);
  typename Accumulate<T>::type acc = 0;
  acc += metal::precise::sqrt(float(out[lid]));
  out[lid] = T(acc);
}

instantiate_kernel("copy_tile_float", copy_tile, float)
instantiate_kernel("copy_tile_half",