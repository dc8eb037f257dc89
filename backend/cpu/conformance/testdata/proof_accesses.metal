#include <metal_stdlib>
using namespace metal;

// One kernel per memory operation the barrier proofs see (the table in
// docs/CATALOGUE.md). In each, the barrier marked NEEDED orders that
// operation with another thread's access of the same element: removing it
// races, and the checking mode catches the race. A proof that missed the
// operation would offer to remove the barrier. Every kernel runs with 64
// threads per threadgroup; in and out hold 256 floats per threadgroup.
// Device memory is read before a first barrier of its own (which orders
// nothing: removable), so that the needed barrier's intervals touch device
// memory on one side only, and the operation alone makes it needed.

// Plain stores and loads of a threadgroup array.
kernel void acc_plain(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                      uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[64];
    s[tid] = in[tg * 256 + tid];
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    out[tg * 256 + tid] = s[63 - tid];
}

// Threadgroup atomics: the counter is cleared, then added to by every
// thread, then read.
kernel void acc_atomic(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                       uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    threadgroup atomic_uint count[1];
    bool pos = in[tg * 256 + tid] > 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        atomic_store_explicit(&count[0], 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    if (pos) {
        atomic_fetch_add_explicit(&count[0], 1u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    if (tid == 0) {
        out[tg * 256] = float(atomic_load_explicit(&count[0], memory_order_relaxed));
    }
}

// simdgroup_store into threadgroup memory: each SIMD group stores an 8x8
// tile; every thread then reads an element of the other group's tile.
kernel void acc_simd_store(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                           uint tid [[thread_index_in_threadgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                           uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[128];
    simdgroup_float8x8 m;
    simdgroup_load(m, in + tg * 256 + sg * 64, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_store(m, s + sg * 64, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    out[tg * 256 + tid] = s[(tid + 64) % 128];
    out[tg * 256 + 64 + tid] = s[tid];
}

// simdgroup_load from threadgroup memory: every thread stores elements;
// each SIMD group then loads the tile the other group's threads wrote.
kernel void acc_simd_load(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                          uint tid [[thread_index_in_threadgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[128];
    float a = in[tg * 256 + tid], b = in[tg * 256 + 64 + tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s[tid] = a;
    s[tid + 64] = b;
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    simdgroup_float8x8 m;
    simdgroup_load(m, s + (1 - sg) * 64, 8);
    simdgroup_store(m, out + tg * 256 + sg * 64, 8);
}

// A store through a cast to a wider type: thread t writes elements 4t to
// 4t+3 of s through a float4 pointer, and reads element t.
kernel void acc_cast(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                     uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[256];
    float4 v = ((device const float4 *) (in + tg * 256))[tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    ((threadgroup float4 *) s)[tid] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    out[tg * 256 + tid] = s[tid];
}

// Threadgroup memory through a byte buffer cast to halves and floats, as
// ggml's kernels carve one threadgroup(0) buffer.
kernel void acc_cast_bytes(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                           threadgroup char *shmem [[threadgroup(0)]],
                           uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float *sf = (threadgroup float *) (shmem + 256);
    threadgroup half *sh = (threadgroup half *) shmem;
    float a = in[tg * 256 + tid], b = in[tg * 256 + 64 + tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sh[tid] = half(a);
    sf[tid] = b;
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    out[tg * 256 + tid] = float(sh[63 - tid]) + sf[tid ^ 1];
}

// A reference into threadgroup memory.
kernel void acc_ref(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                    uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[64];
    threadgroup float &r = s[tid ^ 32];
    float v = in[tg * 256 + tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    r = v;
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    out[tg * 256 + tid] = s[tid];
}

// A call of the file's function handed a threadgroup pointer.
static void put(threadgroup float *p, uint i, float v)
{
    p[i] = v;
}

kernel void acc_call(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                     uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[64];
    float v = in[tg * 256 + tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    put(s, tid ^ 32, v);
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    out[tg * 256 + tid] = s[tid];
}

// A helper's two threadgroup pointer parameters, given one buffer: the
// helper's barrier between the store through one and the load through the
// other orders them.
static float swap_pairs(threadgroup float *a, threadgroup float *b, uint i, float v)
{
    threadgroup_barrier(mem_flags::mem_threadgroup);
    a[i] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    float r = b[i ^ 32];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return r;
}

kernel void acc_alias(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                      uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[64];
    out[tg * 256 + tid] = swap_pairs(s, s, tid, in[tg * 256 + tid]);
}

// Threads in two dimensions: with 32x2 threads, thread (x, 1) reads the
// element thread (x, 0) wrote. Under the one-dimensional assumption
// (.y == 0) the barrier would order nothing.
kernel void acc_2d(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                   uint2 tpitg [[thread_position_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    threadgroup float s[64];
    float v = in[tg * 256 + tpitg.y * 32 + tpitg.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s[tpitg.y * 32 + tpitg.x] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup); // NEEDED
    out[tg * 256 + tpitg.y * 32 + tpitg.x] = s[tpitg.x];
}

// Device memory through two pointers into one buffer, ordered for the
// threadgroup by a device barrier.
kernel void acc_device(device float *buf [[buffer(1)]],
                       uint tid [[thread_index_in_threadgroup]], uint tg [[threadgroup_position_in_grid]])
{
    device float *lo = buf + tg * 256;
    device float *hi = (device float *) (buf + tg * 256 + 64);
    hi[tid] = lo[tid] * 2.0f;
    threadgroup_barrier(mem_flags::mem_device); // NEEDED
    lo[tid] = hi[63 - tid];
}
