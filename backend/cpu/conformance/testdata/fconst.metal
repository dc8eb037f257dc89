#include <metal_stdlib>
using namespace metal;

#ifndef BIAS
#define BIAS 0.0f
#endif

constant float scale [[function_constant(0)]];
constant bool has_bias [[function_constant(1)]];
constant int reps [[function_constant(2)]];
constant bool has_scale = is_function_constant_defined(scale);

// fconst combines function constants (given or zero) with defines.
kernel void fconst(device const float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]])
{
    float v = has_scale ? in[i] * scale : in[i];
    if (has_bias) {
        v += BIAS;
    }
#if defined(DOUBLE_IT)
    v *= 2.0f;
#endif
    if (is_function_constant_defined(reps)) {
        v = -1.0f;
    }
    out[i] = v + float(reps);
}
