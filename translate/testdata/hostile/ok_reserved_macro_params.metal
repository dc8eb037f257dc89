// admit
#include <metal_stdlib>
using namespace metal;
// MLX's steel integral_const_binop: reserved names as a macro's
// parameters, replaced at every use.
#define integral_const_binop(__op__, __operator__)          \
  template <typename T, T tv, typename U, U uv>             \
  constexpr auto __operator__(                              \
      integral_constant<T, tv>, integral_constant<U, uv>) { \
    constexpr auto res = tv __op__ uv;                      \
    return integral_constant<decltype(res), res>{};         \
  }
integral_const_binop(+, operator+);
integral_const_binop(*, operator*);
kernel void k(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = decltype(integral_constant<int, 2>{} * integral_constant<int, 3>{})::value;
}
