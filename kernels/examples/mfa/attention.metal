// Single-query attention (sdpa-vector style) whose problem sizes are
// function constants set at pipeline creation, as metal-flash-attention
// specialises its kernels; the indices and tile sizes come from a header
// (pass -I kernels/examples/mfa/include). The threadgroup tiles are sized
// by the header's bounds, so their size is known before the constants are.
#include <metal_stdlib>
#include "mfa-params.h"
using namespace metal;

constant uint R [[function_constant(MFA_FC_R)]];     // query rows
constant uint C [[function_constant(MFA_FC_C)]];     // keys
constant uint D [[function_constant(MFA_FC_D)]];     // head dimension, at most MFA_MAX_D
constant float scale [[function_constant(MFA_FC_SCALE)]];
constant bool has_scale = is_function_constant_defined(scale);

// one query row per threadgroup of 32 threads: o = softmax(q K^T * scale) V
kernel void attention_vector(
    device const float *Q [[buffer(0)]],
    device const float *K [[buffer(1)]],
    device const float *V [[buffer(2)]],
    device float *O [[buffer(3)]],
    uint row [[threadgroup_position_in_grid]],
    ushort lane [[thread_index_in_simdgroup]]) {
  threadgroup float q_tile[MFA_MAX_D];
  threadgroup float scores[MFA_BLOCK_C];

  const float s = has_scale ? scale : rsqrt(float(D));
  for (uint d = lane; d < D; d += 32) {
    q_tile[d] = Q[row * D + d] * s;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);

  float m = -INFINITY;
  float l = 0.0f;
  float acc[MFA_MAX_D / 32];
  for (ushort i = 0; i < MFA_MAX_D / 32; ++i) {
    acc[i] = 0.0f;
  }

  for (uint c0 = 0; c0 < C; c0 += MFA_BLOCK_C) {
    // one key per lane
    const uint c = c0 + lane;
    float score = -INFINITY;
    if (c < C) {
      score = 0.0f;
      for (uint d = 0; d < D; ++d) {
        score += q_tile[d] * K[c * D + d];
      }
    }
    scores[lane] = score;
    threadgroup_barrier(mem_flags::mem_threadgroup);

    const float block_max = simd_max(score);
    const float m_new = max(m, block_max);
    const float correction = exp(m - m_new);
    l *= correction;
    for (ushort i = 0; i < MFA_MAX_D / 32; ++i) {
      acc[i] *= correction;
    }
    for (uint j = 0; j < MFA_BLOCK_C && c0 + j < C; ++j) {
      const float p = exp(scores[j] - m_new);
      l += p;
      for (ushort i = 0; i < MFA_MAX_D / 32; ++i) {
        const uint d = i * 32 + lane;
        if (d < D) {
          acc[i] += p * V[(c0 + j) * D + d];
        }
      }
    }
    m = m_new;
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }

  for (ushort i = 0; i < MFA_MAX_D / 32; ++i) {
    const uint d = i * 32 + lane;
    if (d < D) {
      O[row * D + d] = acc[i] / l;
    }
  }
}
