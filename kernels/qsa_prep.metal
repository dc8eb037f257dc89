// qsa_prep.metal — per-token preparation for the quantized sparse attention
// ("qsa") family: RMS norm of the fused q|k|v projection, rotary embedding of
// q and k, int8 quantisation of k and v into the KV cache, and the
// mean-pooled keys that qsa_score ranks.
//
// Layouts (row-major, innermost last); NH = H + 2*KVH heads of 128 dims:
//   x       float  [T][NH*128]   fused projection: q heads, then k, then v
//   g       float  [NH*128]      RMS norm weight
//   rope    float2 [npos][32]    (cos, sin) per position and rotary pair
//   qo      half   [T][H][128]
//   kq, vq  char   [ncells][KVH][128]   token t is written at cell pos0 + t
//   ksc,vsc half   [ncells][KVH][4]     one scale per 32-element group
//   pooled  float  [npool][KVH][128]
//
// Rotary embedding covers the first 64 dims of every q and k head, pairing
// dim i with dim i + 32 (i < 32) at angle index i of row pos0 + t. A group of
// 32 is quantised with scale = half(max|x| / 127) and q = clamp(round(x /
// scale), -127, 127); an all-zero group has scale 0 and q 0.

#include <metal_stdlib>
using namespace metal;

// QsaParams is the parameter block shared by every qsa kernel (see
// qsa_prompt.metal; the layout must stay identical).
struct QsaParams {
    uint  T;       // tokens in the batch
    uint  pos0;    // position (= cache cell) of the first token
    uint  H;       // query heads (even)
    uint  KVH;     // key/value heads; H % KVH == 0
    uint  nsel;    // ids per query row (attention kernels only)
    uint  ncells;  // cells in the KV cache
    uint  npool;   // pooled-key rows
    uint  nvalid;  // pooled keys holding data (score kernel only)
    uint  npos;    // rows of the rotary table
    float scale;   // softmax scale (attention kernels only)
    float eps;     // RMS norm epsilon
};

// qsa_prep normalises, rotates and quantises one token. One threadgroup of
// 256 threads (eight simd groups) per token; grid (T, 1, 1). The sum of
// squares is reduced with simd_sum and then across the eight simd groups in
// order; heads are then processed two at a time, thread tid owning dim
// tid & 127 of head 2*pair + tid / 128, so every simd group holds exactly
// one quantisation group.
kernel void qsa_prep(
    device const float*  x     [[buffer(0)]],
    device const float*  g     [[buffer(1)]],
    device const float2* rope  [[buffer(2)]],
    device half*         qo    [[buffer(3)]],
    device char*         kq    [[buffer(4)]],
    device half*         ksc   [[buffer(5)]],
    device char*         vq    [[buffer(6)]],
    device half*         vsc   [[buffer(7)]],
    constant QsaParams&  p     [[buffer(8)]],
    uint3 tgp  [[threadgroup_position_in_grid]],
    uint3 tpos [[thread_position_in_threadgroup]],
    uint  lane [[thread_index_in_simdgroup]],
    uint  sg   [[simdgroup_index_in_threadgroup]])
{
    threadgroup float red[8];    // per-simd-group sums of squares
    threadgroup float hr[256];   // two normalised heads, for rotary partners

    const uint tid = tpos.x;
    const uint t = tgp.x;
    if (t >= p.T) {
        return; // uniform for the whole threadgroup
    }
    const uint nh = p.H + 2 * p.KVH;
    const uint n = nh * 128;
    device const float* xr = x + (size_t)t * n;

    // RMS over the whole fused row.
    float sq = 0.0f;
    for (uint i = tid; i < n; i += 256) {
        float v = xr[i];
        sq += v * v;
    }
    sq = simd_sum(sq);
    if (lane == 0) {
        red[sg] = sq;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float tot = 0.0f;
    for (uint i = 0; i < 8; ++i) {
        tot += red[i];
    }
    const float rs = rsqrt(tot / float(n) + p.eps);

    const uint pos = p.pos0 + t;
    const bool rot = pos < p.npos;
    const bool store = pos < p.ncells;
    const uint d = tid & 127;
    for (uint pair = 0; pair < nh / 2; ++pair) {
        const uint head = pair * 2 + (tid >> 7);
        const uint i = head * 128 + d;
        float v = xr[i] * rs * g[i];
        hr[tid] = v;
        threadgroup_barrier(mem_flags::mem_threadgroup);

        if (head < p.H + p.KVH && d < 64 && rot) {
            float2 cs = rope[(size_t)pos * 32 + (d & 31)];
            float o = hr[tid ^ 32];
            v = d < 32 ? v * cs.x - o * cs.y : v * cs.x + o * cs.y;
        }

        if (head < p.H) {
            qo[((size_t)t * p.H + head) * 128 + d] = half(v);
        } else {
            // This simd group is one 32-element quantisation group.
            float amax = simd_max(abs(v));
            half sh = half(amax / 127.0f);
            float sf = float(sh);
            float qv = sf > 0.0f ? clamp(round(v / sf), -127.0f, 127.0f) : 0.0f;
            const bool isk = head < p.H + p.KVH;
            const uint kh = isk ? head - p.H : head - p.H - p.KVH;
            const size_t r = (size_t)pos * p.KVH + kh;
            if (store) {
                if (isk) {
                    kq[r * 128 + d] = char(qv);
                    if (lane == 0) {
                        ksc[r * 4 + (d >> 5)] = sh;
                    }
                } else {
                    vq[r * 128 + d] = char(qv);
                    if (lane == 0) {
                        vsc[r * 4 + (d >> 5)] = sh;
                    }
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup); // hr is reused
    }
}

// qsa_pool writes the mean of the dequantised keys of each 64-cell block:
// pooled[j][kvh][d] = sum over cells c of block j below pos0 + T of
// kq[c][kvh][d] * ksc[c][kvh][d/32], divided by the number of those cells
// (rows without cells get 0). One threadgroup of 128 threads per (block,
// kv head); grid (npool, KVH, 1); thread d owns dim d.
kernel void qsa_pool(
    device const char*  kq     [[buffer(0)]],
    device const half*  ksc    [[buffer(1)]],
    device float*       pooled [[buffer(2)]],
    constant QsaParams& p      [[buffer(3)]],
    uint3 tgp  [[threadgroup_position_in_grid]],
    uint3 tpos [[thread_position_in_threadgroup]])
{
    const uint d = tpos.x;
    const uint j = tgp.x;
    const uint kvh = tgp.y;
    if (j >= p.npool || kvh >= p.KVH) {
        return;
    }
    const uint kvlen = min(p.pos0 + p.T, p.ncells);
    const uint c0 = j * 64;
    const uint cnt = c0 < kvlen ? min(64u, kvlen - c0) : 0u;

    float sum = 0.0f;
    for (uint i = 0; i < 64; ++i) {
        uint c = c0 + i;
        if (c >= kvlen) {
            break;
        }
        size_t r = (size_t)c * p.KVH + kvh;
        float s = float(ksc[r * 4 + (d >> 5)]);
        sum += float(kq[r * 128 + d]) * s;
    }
    pooled[((size_t)j * p.KVH + kvh) * 128 + d] = cnt > 0 ? sum / float(cnt) : 0.0f;
}
