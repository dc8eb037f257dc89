// qsa_prompt.metal — prompt-phase kernels of the quantized sparse attention
// ("qsa") family: selected-cell flash attention, pooled-key scores, and a
// chunked attention that writes per-chunk partials plus the merge that
// combines them.
//
// The KV cache holds int8 keys and values, one row of 128 bytes per
// (cell, kv head), and one fp16 scale per group of 32 elements (four per
// row). Queries are fp16, head dim 128, H query heads share KVH kv heads
// (grouped-query attention: head h reads kv head h / (H / KVH)).
//
// Layouts (row-major, innermost last):
//   q       half  [T][H][128]
//   kq, vq  char  [ncells][KVH][128]
//   ksc,vsc half  [ncells][KVH][4]
//   ids     int   [T][nsel]          selected cell ids per query token, -1 = none
//   out     half  [T][H][128]
//   pooled  float [npool][KVH][128]  mean-pooled keys, one per 64-cell block
//   scores  float [H][T][npool]
//   part    float [T][H][nsel/64][132]  numerator[128], max, denominator, 0, 0
//
// Cell ids are sanitised on load: an id outside [0, ncells) counts as -1 and
// is never dereferenced; its K/V reads go to row zero with a zero scale, so
// the attention kernels need ncells >= 1.

#include <metal_stdlib>
using namespace metal;

// QsaParams is the parameter block shared by every qsa kernel (the prep
// kernels use the same layout, so one buffer can drive a whole pipeline).
struct QsaParams {
    uint  T;       // query tokens in the batch
    uint  pos0;    // position (= cache cell) of the first query token
    uint  H;       // query heads
    uint  KVH;     // key/value heads; H % KVH == 0
    uint  nsel;    // ids per query row, a multiple of 64 (padded with -1)
    uint  ncells;  // cells in the KV cache
    uint  npool;   // pooled-key rows and score columns, a multiple of 64
    uint  nvalid;  // pooled keys holding data; columns from here on are dead
    uint  npos;    // rows of the rotary table
    float scale;   // softmax scale, 1/sqrt(128)
    float eps;     // RMS norm epsilon
};

// COOP_K4 selects the cooperative K layout in qsa_flash: four lanes share a
// cell and each reads two char4 of its 32-dim quarter, reduced with two xor
// shuffles. When false, every lane walks its two cells' quarters alone.
constant bool COOP_K4 [[function_constant(0)]];

// qsa_flash is prompt-phase flash attention over selected cells. One
// threadgroup of 128 threads (four simd groups) per (head, token); grid
// (H, T, 1). Cells are consumed in chunks of 64. Simd group g computes the
// partial dot over head dims [32g, 32g+32) — exactly K scale group g — and
// the four partials are combined as ((s0 + s1) + (s2 + s3)) * scale through
// two partial buffers in barrier-separated rounds. The softmax is online:
// running max m, p = exp(s - m_new), correction exp(m_old - m_new), and the
// denominator is summed by one thread in cell order. Thread d owns output
// dim d.
kernel void qsa_flash(
    device const half4* q      [[buffer(0)]],
    device const char4* kq     [[buffer(1)]],
    device const half*  ksc    [[buffer(2)]],
    device const char4* vq     [[buffer(3)]],
    device const half*  vsc    [[buffer(4)]],
    device const int*   ids    [[buffer(5)]],
    device half*        out    [[buffer(6)]],
    constant QsaParams& p      [[buffer(7)]],
    uint3 tgp  [[threadgroup_position_in_grid]],
    uint3 tpos [[thread_position_in_threadgroup]],
    uint  lane [[thread_index_in_simdgroup]],
    uint  sg   [[simdgroup_index_in_threadgroup]])
{
    threadgroup float4 qs4[32];       // query row in fp32
    threadgroup int    cid[2][64];    // chunk cell ids, double-buffered
    threadgroup half   kst[2][64][4]; // chunk K scales, double-buffered
    threadgroup float  sp[2][64];     // score partials; sp[1] doubles as P
    threadgroup float  ss[64];        // combined, scaled scores
    threadgroup char4  vt[32][32];    // V staging: 32 cells x 128 bytes
    threadgroup half   vst[32][4];    // V scales of the staged cells
    threadgroup float  stat[4];       // [0] correction, [1] final denominator

    const uint tid = tpos.x;
    const uint h = tgp.x;
    const uint t = tgp.y;
    if (h >= p.H || t >= p.T) {
        return; // uniform for the whole threadgroup
    }
    const uint kvh = h / (p.H / p.KVH);
    const uint nch = p.nsel / 64;
    device const int* row = ids + (size_t)t * p.nsel;

    // Query row and the first chunk's ids and K scales.
    if (tid < 32) {
        qs4[tid] = float4(q[((size_t)t * p.H + h) * 32 + tid]);
    }
    if (nch > 0) {
        for (uint r = 0; r < 2; ++r) {
            uint e = r * 128 + tid;
            uint c = e >> 2;
            uint g = e & 3;
            int id = row[c];
            bool ok = uint(id) < p.ncells;
            if (g == 0) {
                cid[0][c] = ok ? id : -1;
            }
            kst[0][c][g] = ok ? ksc[((size_t)id * p.KVH + kvh) * 4 + g] : half(0.0h);
        }
    }

    float acc = 0.0f;            // output dim tid, unnormalised
    float m_run = -INFINITY;     // running max (simd group 0)
    float l_run = 0.0f;          // running denominator (thread 0)
    const uint cs = lane >> 2;   // COOP_K4: cell slot of this lane
    const uint kk = lane & 3;    // COOP_K4: char4 pair of this lane
    threadgroup float* P = sp[1];

    for (uint ch = 0; ch < nch; ++ch) {
        const uint b = ch & 1;
        const uint nb = b ^ 1;

        // Prefetch the next chunk's ids and K scales into the other buffer;
        // its last readers finished before the previous chunk's final barrier.
        if (ch + 1 < nch) {
            device const int* nid = row + (ch + 1) * 64;
            for (uint r = 0; r < 2; ++r) {
                uint e = r * 128 + tid;
                uint c = e >> 2;
                uint g = e & 3;
                int id = nid[c];
                bool ok = uint(id) < p.ncells;
                if (g == 0) {
                    cid[nb][c] = ok ? id : -1;
                }
                kst[nb][c][g] = ok ? ksc[((size_t)id * p.KVH + kvh) * 4 + g] : half(0.0h);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // Partial dot products of this simd group's quarter, in registers.
        float sc[8];
        if (COOP_K4) {
            for (uint i = 0; i < 8; ++i) {
                uint c = i * 8 + cs;
                int id = cid[b][c];
                float a = 0.0f;
                for (uint k = 0; k < 2; ++k) {
                    device const char4* kr = kq + ((size_t)max(id, 0) * p.KVH + kvh) * 32 + sg * 8 + kk * 2;
                    a += dot(float4(kr[k]), qs4[sg * 8 + kk * 2 + k]);
                }
                a += simd_shuffle_xor(a, 1);
                a += simd_shuffle_xor(a, 2);
                sc[i] = a * float(kst[b][c][sg]);
            }
        } else {
            for (uint i = 0; i < 2; ++i) {
                uint c = lane + 32 * i;
                int id = cid[b][c];
                float a = 0.0f;
                for (uint k = 0; k < 8; ++k) {
                    device const char4* kr = kq + ((size_t)max(id, 0) * p.KVH + kvh) * 32 + sg * 8;
                    float ks = float(kst[b][c][sg]);
                    a += dot(float4(kr[k]), qs4[sg * 8 + k]) * ks;
                }
                sc[i] = a;
            }
        }

        // Round 1: simd groups 0 and 1 publish s0 and s1.
        if (sg < 2) {
            if (COOP_K4) {
                if (kk == 0) {
                    for (uint i = 0; i < 8; ++i) {
                        sp[sg][i * 8 + cs] = sc[i];
                    }
                }
            } else {
                sp[sg][lane] = sc[0];
                sp[sg][lane + 32] = sc[1];
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // Round 2: simd group 0 folds s0 + s1.
        if (sg == 0) {
            ss[lane] = sp[0][lane] + sp[1][lane];
            ss[lane + 32] = sp[0][lane + 32] + sp[1][lane + 32];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // Round 3: simd groups 2 and 3 publish s2 and s3 into the freed buffers.
        if (sg >= 2) {
            if (COOP_K4) {
                if (kk == 0) {
                    for (uint i = 0; i < 8; ++i) {
                        sp[sg - 2][i * 8 + cs] = sc[i];
                    }
                }
            } else {
                sp[sg - 2][lane] = sc[0];
                sp[sg - 2][lane + 32] = sc[1];
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // Round 4: s = ((s0 + s1) + (s2 + s3)) * scale; empty cells are -inf.
        if (sg == 0) {
            for (uint i = 0; i < 2; ++i) {
                uint c = lane + 32 * i;
                float s = (ss[c] + (sp[0][c] + sp[1][c])) * p.scale;
                ss[c] = cid[b][c] < 0 ? -INFINITY : s;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // Online softmax. P aliases sp[1], whose last read was round 4.
        if (sg == 0) {
            float mx = simd_max(max(ss[lane], ss[lane + 32]));
            float m_new = max(m_run, mx);
            for (uint i = 0; i < 2; ++i) {
                uint c = lane + 32 * i;
                float s = ss[c];
                P[c] = s == -INFINITY ? 0.0f : exp(s - m_new);
            }
            if (lane == 0) {
                stat[0] = m_run == -INFINITY ? 0.0f : exp(m_run - m_new);
            }
            m_run = m_new;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        const float corr = stat[0];
        if (tid == 0) {
            // Denominator: one thread, cell order.
            l_run *= corr;
            for (uint c = 0; c < 64; ++c) {
                l_run += P[c];
            }
        }
        acc *= corr;

        // V accumulation in two runs of 32 staged cells.
        for (uint run = 0; run < 2; ++run) {
            for (uint r = 0; r < 8; ++r) {
                uint e = r * 128 + tid;
                uint c = e >> 5;
                uint j = e & 31;
                int id = cid[b][run * 32 + c];
                device const char4* vr = vq + (size_t)kvh * 32;
                vt[c][j] = id >= 0 ? vr[(size_t)id * p.KVH * 32 + j] : char4(0);
            }
            {
                uint c = tid >> 2;
                uint g = tid & 3;
                int id = cid[b][run * 32 + c];
                vst[c][g] = id >= 0 ? vsc[((size_t)id * p.KVH + kvh) * 4 + g] : half(0.0h);
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
            for (uint c = 0; c < 32; ++c) {
                float vs = float(vst[c][tid >> 5]);
                char4 v4 = vt[c][tid >> 2];
                acc += P[run * 32 + c] * (float(v4[tid & 3]) * vs);
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
    }

    if (tid == 0) {
        stat[1] = l_run;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const float l = stat[1];
    out[((size_t)t * p.H + h) * 128 + tid] = half(l > 0.0f ? acc / l : 0.0f);
}

// qsa_score computes a 64x64 tile of pooled-key scores: 64 query tokens by
// 64 pooled keys of one head, dot over head dim 128, times the softmax
// scale. One threadgroup of 256 threads per tile; grid (npool/64,
// ceil(T/64), H). The 16 KiB tile first stages the pooled keys, half the
// head dim at a time, then holds the finished scores for a coalesced write.
// A query at position pos sees pooled key j when 64*j <= pos; scores of
// later valid keys are left untouched (the host prefills them), and dead
// keys (j >= nvalid) get -INFINITY from a scalar tail loop.
kernel void qsa_score(
    device const half*  q      [[buffer(0)]],
    device const float* pooled [[buffer(1)]],
    device float*       scores [[buffer(2)]],
    constant QsaParams& p      [[buffer(3)]],
    uint3 tgp  [[threadgroup_position_in_grid]],
    uint3 tpos [[thread_position_in_threadgroup]])
{
    threadgroup float tile[64][64];

    const uint tid = tpos.x;
    const uint col0 = tgp.x * 64;
    const uint row0 = tgp.y * 64;
    const uint h = tgp.z;
    if (col0 >= p.npool || row0 >= p.T || h >= p.H) {
        return; // uniform for the whole threadgroup
    }
    const uint kvh = h / (p.H / p.KVH);
    const uint ty = tid >> 4; // rows 4*ty .. 4*ty+3
    const uint tx = tid & 15; // cols 4*tx .. 4*tx+3

    float acc[4][4];
    for (uint i = 0; i < 4; ++i) {
        for (uint j = 0; j < 4; ++j) {
            acc[i][j] = 0.0f;
        }
    }

    for (uint half_d = 0; half_d < 2; ++half_d) {
        // Stage 64 keys x 64 dims; dead keys stage as zero.
        for (uint r = 0; r < 16; ++r) {
            uint e = r * 256 + tid;
            uint key = e >> 6;
            uint d = e & 63;
            uint j = col0 + key;
            tile[key][d] = j < p.nvalid && j < p.npool ? pooled[((size_t)j * p.KVH + kvh) * 128 + half_d * 64 + d] : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint i = 0; i < 4; ++i) {
            uint t = row0 + ty * 4 + i;
            if (t >= p.T) {
                continue;
            }
            device const half* qr = q + ((size_t)t * p.H + h) * 128 + half_d * 64;
            for (uint d = 0; d < 64; ++d) {
                float qv = float(qr[d]);
                for (uint j = 0; j < 4; ++j) {
                    acc[i][j] += qv * tile[tx * 4 + j][d];
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    // The tile now holds the finished scores.
    for (uint i = 0; i < 4; ++i) {
        for (uint j = 0; j < 4; ++j) {
            tile[ty * 4 + i][tx * 4 + j] = acc[i][j] * p.scale;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint r = 0; r < 16; ++r) {
        uint e = r * 256 + tid;
        uint i = e >> 6;
        uint j = e & 63;
        uint t = row0 + i;
        uint col = col0 + j;
        if (t < p.T && col < p.nvalid && col < p.npool && col * 64 <= p.pos0 + t) {
            scores[((size_t)h * p.T + t) * p.npool + col] = tile[i][j];
        }
    }

    // Dead-key tail, one query row per thread.
    if (tid < 64 && row0 + tid < p.T && col0 + 64 > p.nvalid) {
        device float* srow = scores + ((size_t)h * p.T + row0 + tid) * p.npool;
        const uint end = min(col0 + 64, p.npool);
        for (uint col = max(col0, p.nvalid); col < end; ++col) {
            srow[col] = -INFINITY;
        }
    }
}

// qsa_attn_part is chunked attention over the selected cells: one
// threadgroup of 128 threads per (64-cell chunk, token, head); grid
// (nsel/64, T, H). It writes the chunk's unnormalised numerator (thread d
// owns dim d), its max score and its denominator; a chunk without any
// selected cell writes zeros and a max of -INFINITY.
kernel void qsa_attn_part(
    device const half4* q      [[buffer(0)]],
    device const char4* kq     [[buffer(1)]],
    device const half*  ksc    [[buffer(2)]],
    device const char*  vq     [[buffer(3)]],
    device const half*  vsc    [[buffer(4)]],
    device const int*   ids    [[buffer(5)]],
    device float*       part   [[buffer(6)]],
    constant QsaParams& p      [[buffer(7)]],
    uint3 tgp  [[threadgroup_position_in_grid]],
    uint3 tpos [[thread_position_in_threadgroup]],
    uint  lane [[thread_index_in_simdgroup]],
    uint  sg   [[simdgroup_index_in_threadgroup]])
{
    threadgroup int   cid[64];
    threadgroup float s[64];    // scores, then probabilities in place
    threadgroup float stat[2];  // [0] chunk max, [1] denominator

    const uint tid = tpos.x;
    const uint ch = tgp.x;
    const uint t = tgp.y;
    const uint h = tgp.z;
    const uint nch = p.nsel / 64;
    if (ch >= nch || t >= p.T || h >= p.H) {
        return; // uniform for the whole threadgroup
    }
    const uint kvh = h / (p.H / p.KVH);

    if (tid < 64) {
        int id = ids[(size_t)t * p.nsel + ch * 64 + tid];
        cid[tid] = uint(id) < p.ncells ? id : -1;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Scores: simd group g takes cells 16g .. 16g+15, lane l dims 4l .. 4l+3.
    const float4 qv = float4(q[((size_t)t * p.H + h) * 32 + lane]);
    for (uint i = 0; i < 16; ++i) {
        uint c = sg * 16 + i;
        int id = cid[c];
        size_t rowi = (size_t)max(id, 0) * p.KVH + kvh;
        float ks = id >= 0 ? float(ksc[rowi * 4 + (lane >> 3)]) : 0.0f;
        float a = simd_sum(dot(float4(kq[rowi * 32 + lane]), qv) * ks);
        if (lane == 0) {
            s[c] = id >= 0 ? a * p.scale : -INFINITY;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    if (sg == 0) {
        float mx = simd_max(max(s[lane], s[lane + 32]));
        for (uint i = 0; i < 2; ++i) {
            uint c = lane + 32 * i;
            s[c] = s[c] == -INFINITY ? 0.0f : exp(s[c] - mx);
        }
        if (lane == 0) {
            stat[0] = mx;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    if (tid == 0) {
        float l = 0.0f;
        for (uint c = 0; c < 64; ++c) {
            l += s[c];
        }
        stat[1] = l;
    }
    float num = 0.0f;
    for (uint c = 0; c < 64; ++c) {
        int id = cid[c];
        if (id < 0) {
            continue;
        }
        size_t rowi = (size_t)id * p.KVH + kvh;
        num += s[c] * (float(vq[rowi * 128 + tid]) * float(vsc[rowi * 4 + (tid >> 5)]));
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    device float* dst = part + (((size_t)t * p.H + h) * nch + ch) * 132;
    dst[tid] = num;
    if (tid == 0) {
        dst[128] = stat[0];
        dst[129] = stat[1];
        dst[130] = 0.0f;
        dst[131] = 0.0f;
    }
}

// qsa_merge combines the per-chunk partials of qsa_attn_part into the fp16
// output: with M the largest chunk max, out = sum(num_i * w_i) /
// sum(l_i * w_i), w_i = exp(m_i - M), chunks in order. One threadgroup of
// 128 threads per (token, head); grid (T, H, 1). A row without any selected
// cell writes zeros.
kernel void qsa_merge(
    device const float* part   [[buffer(0)]],
    device half*        out    [[buffer(1)]],
    constant QsaParams& p      [[buffer(2)]],
    uint3 tgp  [[threadgroup_position_in_grid]],
    uint3 tpos [[thread_position_in_threadgroup]])
{
    const uint tid = tpos.x;
    const uint t = tgp.x;
    const uint h = tgp.y;
    if (t >= p.T || h >= p.H) {
        return;
    }
    const uint nch = p.nsel / 64;
    device const float* src = part + ((size_t)t * p.H + h) * nch * 132;

    float mx = -INFINITY;
    for (uint ch = 0; ch < nch; ++ch) {
        mx = max(mx, src[ch * 132 + 128]);
    }
    float l = 0.0f;
    float acc = 0.0f;
    if (mx != -INFINITY) {
        for (uint ch = 0; ch < nch; ++ch) {
            float m = src[ch * 132 + 128];
            float w = m == -INFINITY ? 0.0f : exp(m - mx);
            l += src[ch * 132 + 129] * w;
            acc += src[ch * 132 + tid] * w;
        }
    }
    out[((size_t)t * p.H + h) * 128 + tid] = half(l > 0.0f ? acc / l : 0.0f);
}
