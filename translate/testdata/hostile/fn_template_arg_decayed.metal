// refuse @1: the address of function helper
#include <metal_stdlib>
using namespace metal;
float helper(float x) { return x; }
template <typename F> float call(F f) { return f(1); }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[0] = call(/*@1*/helper);
}
