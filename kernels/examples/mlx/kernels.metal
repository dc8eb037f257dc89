// MLX-style instantiations of the kernels in mlxk/kernels.h; pass
// -I kernels/examples/mlx/include.
#include "mlxk/utils.h"
#include "mlxk/kernels.h"

#define instantiate_softmax(name, itype) \
  instantiate_kernel("block_softmax_" #name, softmax_single_row, itype) \
  instantiate_kernel("block_softmax_precise_" #name, softmax_single_row, itype, float)

instantiate_softmax(float32, float)
instantiate_softmax(float16, half)

#define instantiate_row_reduce(name, op, itype, otype) \
  instantiate_kernel("row_reduce_" #name "_" #itype, row_reduce_simple, itype, otype, op<otype>)

instantiate_row_reduce(sum, Sum, float, float)
instantiate_row_reduce(max, Max, float, float)
instantiate_row_reduce(sum, Sum, half, float)

#define instantiate_gemv(name, itype, bm, tm) \
  instantiate_kernel("gemv_" #name "_bm" #bm "_tm" #tm, gemv, itype, bm, tm)

instantiate_gemv(float32, float, 4, 4)
instantiate_gemv(float32, float, 8, 1)
instantiate_gemv(float32, float, 1, 4)
