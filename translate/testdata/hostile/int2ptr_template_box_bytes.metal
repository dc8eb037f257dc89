// refuse @1: whose type Box holds pointers
#include <metal_stdlib>
using namespace metal;
template <typename T> struct Box { T v; Box(T x) : v(x) {} };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  Box b(out);
  (/*@1*/(thread ulong*)&b)[0] = addr;
  b.v[0] = 1;
}
