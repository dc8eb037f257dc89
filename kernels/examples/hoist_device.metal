// hoist_device.metal: a grouped-scale dequantising dot product. Each thread
// walks its row in a counted loop and reads, on every iteration, the same
// fp16 scale of its group from device memory and the same field of the
// parameter block. The output is float, which cannot alias the half scales,
// so metalab's hoist may read the scale once, before the loop; the loop runs
// 8 times, so the early load cannot fault where the loop would not have run.
#include <metal_stdlib>
using namespace metal;

struct Params {
    uint  group;   // scale group of this dispatch
    float bias;
};

kernel void hoist_device(device const char4 *q      [[buffer(0)]],
                         device const half  *scales [[buffer(1)]],
                         device float       *out    [[buffer(2)]],
                         constant Params    &p      [[buffer(3)]],
                         uint gid [[thread_position_in_grid]])
{
    float acc = 0.0f;
    for (uint i = 0; i < 8; ++i) {
        const float4 v = float4(q[gid * 8 + i]);
        acc += (v.x + v.y + v.z + v.w) * float(scales[p.group]);
    }
    out[gid] = acc + p.bias;
}
