// admit
#include <metal_stdlib>
using namespace metal;
// ggml's blocks: arrays named qs and qh, and locals of those names that are
// integers; a cast of the member is a cast of an array.
struct block_q5 { half d; uchar qh[4]; uchar qs[16]; };
kernel void k(device float* out [[buffer(0)]], device const block_q5* x [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  const uint qh = *((device const uint *) x[i].qh);
  device const ushort * qs = (device const ushort *) x[i].qs + 2;
  device const block_q5 * xb = x + i;
  device const ushort * q2 = (device const ushort *)(xb->qs + 4);
  out[i] = float(qh) + float(qs[0]) + float(q2[0]) + float(xb->d);
}
