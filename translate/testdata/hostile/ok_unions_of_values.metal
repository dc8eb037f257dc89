// admit
#include <metal_stdlib>
using namespace metal;
typedef struct { union { struct { half d; half m; }; half2 dm; }; uchar qs[16]; } block_q4_1;
union Bits { float f; uint u; };
kernel void k(device const block_q4_1* b [[buffer(0)]], device float* o [[buffer(1)]]) {
  Bits x;
  x.f = float(b[0].d);
  o[0] = float(x.u & 1) + float(b[0].dm.y);
}
