// refuse @1: __attribute__((constructor))
#include <metal_stdlib>
using namespace metal;
#define A(x) __attribute__((x))
#define CAT(a, b) a##b
/*@1*/A(CAT(constr, uctor)) void early() {}
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = 0;
}
