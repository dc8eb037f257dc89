// refuse @1: call of pthread_create: the C library
#include <metal_stdlib>
using namespace metal;
void run(device void* a) {}
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  /*@1*/pthread_create(0, 0, 0, 0);
}
