// Softmax, row reductions and a mat-vec product as MLX writes its kernels:
// templates in a header, instantiated by the including .metal file through
// instantiate_kernel. Needs mlxk/utils.h first.
#pragma once

// softmax of one row per threadgroup, N_READS elements per thread at a time
template <typename T, typename AccT = T, int N_READS = 4>
[[kernel]] void softmax_single_row(
    const device T* in [[buffer(0)]],
    device T* out [[buffer(1)]],
    constant int& axis_size [[buffer(2)]],
    uint gid [[threadgroup_position_in_grid]],
    uint _lid [[thread_position_in_threadgroup]],
    uint simd_lane_id [[thread_index_in_simdgroup]],
    uint simd_group_id [[simdgroup_index_in_threadgroup]]) {
  int lid = _lid;

  typedef MD<AccT> md_t;
  threadgroup AccT local_max[SIMD_SIZE];
  threadgroup md_t local_md[SIMD_SIZE];

  AccT ld[N_READS];

  in += gid * size_t(axis_size) + lid * N_READS;
  if (lid * N_READS + N_READS <= axis_size) {
    MLX_MTL_PRAGMA_UNROLL
    for (int i = 0; i < N_READS; i++) {
      ld[i] = AccT(in[i]);
    }
  } else {
    for (int i = 0; i < N_READS; i++) {
      ld[i] = ((lid * N_READS + i) < axis_size) ? AccT(in[i]) : Limits<AccT>::min;
    }
  }
  if (simd_group_id == 0) {
    local_max[simd_lane_id] = Limits<AccT>::min;
    local_md[simd_lane_id].d = 0;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);

  // the row's maximum
  AccT maxval = Limits<AccT>::min;
  MLX_MTL_PRAGMA_UNROLL
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

  // the normaliser
  AccT normalizer = 0;
  MLX_MTL_PRAGMA_UNROLL
  for (int i = 0; i < N_READS; i++) {
    AccT e = fast::exp(ld[i] - maxval);
    ld[i] = e;
    normalizer += e;
  }
  normalizer = simd_sum(normalizer);
  if (simd_lane_id == 0) {
    local_md[simd_group_id].d = normalizer;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_group_id == 0) {
    normalizer = simd_sum(local_md[simd_lane_id].d);
    if (simd_lane_id == 0) {
      local_md[0].d = normalizer;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  normalizer = 1 / local_md[0].d;

  out += gid * size_t(axis_size) + lid * N_READS;
  if (lid * N_READS + N_READS <= axis_size) {
    MLX_MTL_PRAGMA_UNROLL
    for (int i = 0; i < N_READS; i++) {
      out[i] = T(ld[i] * normalizer);
    }
  } else {
    for (int i = 0; i < N_READS; i++) {
      if ((lid * N_READS + i) < axis_size) {
        out[i] = T(ld[i] * normalizer);
      }
    }
  }
}

// reduce each row to one value with Op (Sum, Max), one row per threadgroup
template <typename T, typename U, typename Op, int N_READS = 4>
[[kernel]] void row_reduce_simple(
    const device T* in [[buffer(0)]],
    device U* out [[buffer(1)]],
    constant size_t& reduction_size [[buffer(2)]],
    uint gid [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]],
    uint lsize [[threads_per_threadgroup]],
    uint simd_lane_id [[thread_index_in_simdgroup]],
    uint simd_group_id [[simdgroup_index_in_threadgroup]]) {
  threadgroup U shared_vals[SIMD_SIZE];
  Op op;
  U total = Op::init;

  in += gid * reduction_size;
  for (size_t r = lid * N_READS; r < reduction_size; r += lsize * N_READS) {
    MLX_MTL_PRAGMA_UNROLL
    for (int i = 0; i < N_READS; i++) {
      if (r + i < reduction_size) {
        total = op(total, static_cast<U>(in[r + i]));
      }
    }
  }

  total = op.simd_reduce(total);
  if (simd_group_id == 0) {
    shared_vals[simd_lane_id] = Op::init;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_lane_id == 0) {
    shared_vals[simd_group_id] = total;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  total = op.simd_reduce(shared_vals[simd_lane_id]);
  if (lid == 0) {
    out[gid] = total;
  }
}

// y = A x for row-major A (M rows of K), BM simdgroups of SIMD_SIZE threads
// per threadgroup, TM rows per thread; the simdgroups' partial sums meet in
// threadgroup memory
template <typename T, const int BM, const int TM>
struct GEMVKernel {
  typedef float acc_type;
  static constexpr constant int blockM = BM * TM;
  static constexpr constant int tgp_mem_size = BM > 1 ? BM * blockM : 0;

  // one thread's share of x, from device or threadgroup memory
  METAL_FUNC static void load(thread acc_type* dst, const device T* src, int n, int k0) {
    MLX_MTL_PRAGMA_UNROLL
    for (int i = 0; i < 4; i++) {
      dst[i] = k0 + i < n ? static_cast<acc_type>(src[k0 + i]) : 0;
    }
  }
  METAL_FUNC static void load(thread acc_type* dst, const threadgroup T* src, int n, int k0) {
    MLX_MTL_PRAGMA_UNROLL
    for (int i = 0; i < 4; i++) {
      dst[i] = k0 + i < n ? static_cast<acc_type>(src[k0 + i]) : 0;
    }
  }

  static METAL_FUNC void run(
      const device T* mat,
      const device T* in_vec,
      device T* out_vec,
      const int M,
      const int K,
      threadgroup acc_type* tgp_memory,
      uint3 tid,
      uint simd_gid,
      uint simd_lid) {
    acc_type result[TM] = {0};
    acc_type v[4];
    const int out_row = tid.x * blockM;
    for (int k = simd_lid * 4; k < K; k += SIMD_SIZE * 4) {
      load(v, in_vec, K, k);
      MLX_MTL_PRAGMA_UNROLL
      for (int tm = 0; tm < TM; tm++) {
        const int row = out_row + simd_gid * TM + tm;
        if (row < M) {
          for (int i = 0; i < 4 && k + i < K; i++) {
            result[tm] += v[i] * static_cast<acc_type>(mat[row * K + k + i]);
          }
        }
      }
    }
    MLX_MTL_PRAGMA_UNROLL
    for (int tm = 0; tm < TM; tm++) {
      result[tm] = simd_sum(result[tm]);
    }
    if (BM > 1) {
      if (simd_lid == 0) {
        MLX_MTL_PRAGMA_UNROLL
        for (int tm = 0; tm < TM; tm++) {
          tgp_memory[simd_gid * TM + tm] = result[tm];
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (simd_lid == 0) {
      MLX_MTL_PRAGMA_UNROLL
      for (int tm = 0; tm < TM; tm++) {
        const int row = out_row + simd_gid * TM + tm;
        if (row < M) {
          out_vec[row] = static_cast<T>(BM > 1 ? tgp_memory[simd_gid * TM + tm] : result[tm]);
        }
      }
    }
  }
};

template <typename T, const int BM, const int TM>
[[kernel]] void gemv(
    const device T* mat [[buffer(0)]],
    const device T* in_vec [[buffer(1)]],
    device T* out_vec [[buffer(2)]],
    const constant int& M [[buffer(3)]],
    const constant int& K [[buffer(4)]],
    uint3 tid [[threadgroup_position_in_grid]],
    uint simd_gid [[simdgroup_index_in_threadgroup]],
    uint simd_lid [[thread_index_in_simdgroup]]) {
  using gemv_kernel = GEMVKernel<T, BM, TM>;
  threadgroup typename gemv_kernel::acc_type tgp_memory[gemv_kernel::tgp_mem_size == 0 ? 1 : gemv_kernel::tgp_mem_size];
  gemv_kernel::run(mat, in_vec, out_vec, M, K, tgp_memory, tid, simd_gid, simd_lid);
}
