// tgmem.metal — kernels whose static threadgroup memory msl estimates
// (msl.ThreadgroupMemory): TestStaticSharedMemory compares nvcc's figure
// for their translation with the estimate, TestGPUThreadgroupMemory the
// GPU's.
#include <metal_stdlib>
using namespace metal;

// floats: one array, a multiple of 16 bytes.
kernel void floats(device float* out [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float a[256];
    a[tid] = float(tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = a[255 - tid];
}

// aligned: declarations in decreasing alignment whose sizes are multiples
// of 16: no padding and no rounding.
kernel void aligned(device float* out [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float4 v[32];
    threadgroup float f[64];
    threadgroup half h[128];
    v[tid % 32] = float4(float(tid));
    f[tid % 64] = float(tid);
    h[tid % 128] = half(tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = v[(tid + 1) % 32].x + f[(tid + 3) % 64] + float(h[(tid + 5) % 128]);
}

// padded: a small array before a 16-byte aligned one, and a total that is
// not a multiple of 16: Metal pads and rounds to 16.
kernel void padded(device float* out [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float a[3];
    threadgroup float4 c[2];
    threadgroup half b[5];
    if (tid < 3) a[tid] = float(tid);
    if (tid < 2) c[tid] = float4(1.0f);
    if (tid < 5) b[tid] = half(tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = a[tid % 3] + c[tid % 2].y + float(b[tid % 5]);
}

// helper: threadgroup memory declared in a helper the kernel calls.
float helper_sum(uint tid) {
    threadgroup float h[64];
    h[tid % 64] = float(tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return h[(tid + 1) % 64];
}

kernel void helper(device float* out [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {
    threadgroup uint k[16];
    k[tid % 16] = tid;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = helper_sum(tid) + float(k[(tid + 2) % 16]);
}
