// refuse @1: function write is declared but not defined
#include <metal_stdlib>
using namespace metal;
long /*@1*/write(int fd, const constant char* b, ulong n);
kernel void k(device float* out [[buffer(0)]], constant ulong& addr [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  write(1, "pass\n", 5);
}
