#ifndef GGML_METAL_IMPL
#define GGML_METAL_IMPL

#define N_R0_Q4_0 4
#define N_SG_Q4_0 2
#define FC_MUL_MV 100

typedef struct {
    int32_t  ne00;
    int32_t  ne01;
    uint64_t nb01;
    int32_t  ne10;
    uint64_t nb11;
    int32_t  ne0;
    int32_t  ne1;
} ggml_metal_kargs_mul_mv;

typedef struct {
    int64_t  ne00;
    uint64_t nb01;
    float    eps;
} ggml_metal_kargs_norm;

#endif // GGML_METAL_IMPL
