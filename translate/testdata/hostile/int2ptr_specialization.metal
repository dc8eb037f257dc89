// refuse @1: a pointer type as a template argument of F
// refuse @2: not visibly a pointer
#include <metal_stdlib>
using namespace metal;
// The specialisations' heads are patterns; a use with a pointer type and
// a forging body are still refused.
template <typename T> struct F { static T make(ulong n) { return T(n); } };
template <> struct F<device float*> { static device float* make(ulong n) { return nullptr; } };
template <typename T> struct F<device T*> { static device T* make(ulong n) { return /*@2*/(device T*)n; } };
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  F<device float/*@1*/*>::make(addr)[0] = 1;
}
