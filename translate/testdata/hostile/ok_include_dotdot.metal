// admit
#include <metal_stdlib>
using namespace metal;
#include "inc/sub/../lib.h"
kernel void k(device float* o [[buffer(0)]]) { o[0] = lib_f(1); }
