// Kernel arguments and tuning constants shared by the host and the Metal
// kernels, in the style of ggml's Metal implementation header.
#ifndef GGML_METAL_IMPL
#define GGML_METAL_IMPL

// kernel parameters for the mat-vec threadgroups
#define N_SIMDWIDTH 32 // assuming SIMD group size is 32
#define N_R0_Q4_0 4    // rows per simdgroup
#define N_SG_Q4_0 2    // simdgroups per threadgroup

// function constant indices, one range per kernel family
#define FC_SUM_ROWS 100
#define FC_RMS_NORM 200

// unroll a loop fully; the loop header is the argument
#define FOR_UNROLL(x) _Pragma("clang loop unroll(full)") for (x)

typedef struct {
    int32_t  ne00;
    int32_t  ne01;
    uint64_t nb01;
} ggml_metal_kargs_sum_rows;

typedef struct {
    int32_t  ne00;
    int32_t  ne00_4;
    uint64_t nb01;
    float    eps;
} ggml_metal_kargs_rms_norm;

typedef struct {
    int32_t  ne00;
    int32_t  ne01;
    uint64_t nb01;
    float    scale;
} ggml_metal_kargs_soft_max;

typedef struct {
    int32_t  ne00;
    int32_t  ne01;
    uint64_t nb01;
} ggml_metal_kargs_mul_mv;

typedef struct {
    int32_t  ne00;
    uint64_t nb01;
} ggml_metal_kargs_argmax;

#endif // GGML_METAL_IMPL
