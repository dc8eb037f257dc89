// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* p [[buffer(0)]], device float* q [[buffer(1)]]) {
  device uint* none = (device uint*)0;
  device uint* none2 = nullptr;
  ulong d = (ulong)(q - p);
  bool aligned = ((ulong)p & 15) == 0;
  p[0] = float(d) + (aligned ? 1.0f : 0.0f) + (none == none2 ? 1.0f : 0.0f);
}
