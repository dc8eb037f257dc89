// refuse @1: call of signal: the C library
// refuse @2: the address of function on_segv
#include <metal_stdlib>
using namespace metal;
void on_segv(int s) {}
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/signal(11, /*@2*/on_segv);
}
