// refuse @1: #line may not name a file
#include <metal_stdlib>
using namespace metal;
#define F "/etc/passwd"
/*@1*/#line 1 F
kernel void k(device float* out [[buffer(0)]]) {
  out[0] = ;
}
