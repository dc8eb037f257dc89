// broken.cu — a TU that does not compile, for the compile-error path.
#include "mtl_cuda.h"

#line 7 "kernels/broken.metal"
MTL_DEVICE void f() { undeclared_name = 1; }
