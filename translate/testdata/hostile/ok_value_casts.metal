// admit
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* o [[buffer(0)]], constant ulong& n [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  float a = (float)n, b = float(i), c = static_cast<float>(n);
  int d = (int)a;
  o[i] = (a) * b + (c) - float(d) + (float)(n & 3) + float((uint)(i << 2));
}
