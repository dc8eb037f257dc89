// refuse @1: #line may not name a file
#include <metal_stdlib>
using namespace metal;
/*@1*/#line 1 "/etc/passwd"
kernel void k(device float* out [[buffer(0)]]) {
  out[0] = ;
}
