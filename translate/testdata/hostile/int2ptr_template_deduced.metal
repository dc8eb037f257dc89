// refuse @1: deduces its template parameter P as a pointer type
#include <metal_stdlib>
using namespace metal;
template <typename P> P forge(P like, ulong n) { return (P)n; }
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]]) {
  forge(/*@1*/out, addr)[0] = 1;
}
