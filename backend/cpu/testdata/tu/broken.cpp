// broken.cpp — a TU that does not compile, for the compile-error path.
#include "mtl_rt.h"

#line 7 "kernels/broken.metal"
void f() { undeclared_name = 1; }
