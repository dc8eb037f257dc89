// simd_slices.metal: simd groups that keep to themselves. Each simd group
// owns one row of slab[][] and exchanges values between its own lanes
// through it (lane L with lane L^1, then with lane L^2, then every lane
// with the first lane of its quad), ordering them with simdgroup_barrier
// and a simd_sum only. Its threadgroup barriers are the kind a human
// reviewer calls unneeded: one before any threadgroup memory is touched,
// one between two regions no other simd group sees, and an execution-only
// mem_none barrier in front of the simd_sum, as ggml's soft_max has.
//
// Every barrier carries a `drop:` comment: what the checking mode must
// report when that barrier alone is removed (see check/trust_test.go).
#include <metal_stdlib>
using namespace metal;

kernel void simd_slices(device const float *x  [[buffer(0)]],
                        device float *y        [[buffer(1)]],
                        uint gid               [[thread_position_in_grid]],
                        ushort sgitg           [[simdgroup_index_in_threadgroup]],
                        ushort tiisg           [[thread_index_in_simdgroup]])
{
    threadgroup float slab[8][32];

    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: pass (unneeded: no thread has touched threadgroup memory yet)
    const float v = x[gid];
    slab[sgitg][tiisg] = v;
    simdgroup_barrier(mem_flags::mem_threadgroup); // drop: lockstep (lane L reads the slot lane L^1 of its own simd group writes just above)
    const float a = slab[sgitg][tiisg ^ 1];

    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: pass (unneeded: slab[sgitg] is this simd group's own row, and the simd_sum below orders its lanes before lane L^1 overwrites the slot lane L read)
    threadgroup_barrier(mem_flags::mem_none); // drop: pass (unneeded: mem_none orders no memory)
    const float s = simd_sum(a);
    slab[sgitg][tiisg] = s - a;
    simdgroup_barrier(mem_flags::mem_threadgroup); // drop: lockstep (lane L reads the slot lane L^2 of its own simd group rewrites just above)
    const float c = slab[sgitg][tiisg ^ 2];
    simdgroup_barrier(mem_flags::mem_threadgroup); // drop: lockstep (lane L rewrites below the slot lane L^2 read just above)
    slab[sgitg][tiisg] = c * v;
    simdgroup_barrier(mem_flags::mem_threadgroup); // drop: lockstep (lane L reads the slot of lane L & ~3, the first lane of its quad, rewritten just above)
    const float d = slab[sgitg][tiisg & ~3u];

    y[gid] = c + d;
}
