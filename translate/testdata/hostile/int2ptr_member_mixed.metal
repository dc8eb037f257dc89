// refuse @1: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
// Two structs have a member qs: an array in one, an integer in the other.
struct q4 { uchar qs[16]; };
struct q8 { ulong qs; };
kernel void k(device float* out [[buffer(0)]], device q4* a [[buffer(1)]], device q8* b [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  device const uchar* p = (device const uchar*) a->qs;
  device float* o = /*@1*/(device float*) b->qs;
  o[i] = p[i];
}
