// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
// The member qh is an integer; only a variable elsewhere named qh is a
// pointer. Member accesses are judged by members, never by variables.
struct blk { ulong qh; };
kernel void k(device float* out [[buffer(0)]], device blk* b [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  device float* qh = out;
  device float* p = /*@1*/(device float*) b->qh;
  p[i] = qh[i];
}
