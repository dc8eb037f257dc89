#include <metal_stdlib>
#include <metal_type_traits>
using namespace metal;

#define METAL_FUNC inline __attribute__((always_inline))

// Compile-time checks: each trait on the types kernels template over.
static_assert(metal::is_same_v<float, float> && !metal::is_same_v<half, float>, "is_same");
static_assert(metal::is_floating_point_v<half> && metal::is_floating_point_v<bfloat> &&
                  metal::is_floating_point_v<float> && !metal::is_floating_point_v<int> &&
                  !metal::is_floating_point_v<float4>,
              "is_floating_point");
static_assert(metal::is_integral_v<int> && metal::is_integral_v<ushort> && metal::is_integral_v<bool> &&
                  !metal::is_integral_v<half>,
              "is_integral");
static_assert(metal::is_signed_v<half> && metal::is_signed_v<char> && !metal::is_signed_v<uint> &&
                  metal::is_unsigned_v<uchar> && !metal::is_unsigned_v<bfloat>,
              "is_signed");
static_assert(metal::is_scalar_v<half> && metal::is_scalar_v<bool> && !metal::is_scalar_v<half4> &&
                  metal::is_arithmetic_v<bfloat> && !metal::is_arithmetic_v<float2>,
              "is_scalar");
static_assert(metal::is_vector_v<float4> && metal::is_vector_v<packed_half3> && metal::is_vector_v<const uint2> &&
                  !metal::is_vector_v<float>,
              "is_vector");
static_assert(metal::vec_elements<float3>::value == 3 && metal::vec_elements<packed_char4>::value == 4 &&
                  metal::vec_elements<half>::value == 1,
              "vec_elements");
static_assert(metal::is_same_v<metal::make_unsigned_t<int>, uint> && metal::is_same_v<metal::make_signed_t<ushort>, short> &&
                  metal::is_same_v<metal::make_unsigned_t<int4>, uint4>,
              "make_unsigned");
static_assert(metal::is_same_v<metal::remove_cv_t<const volatile half>, half> &&
                  metal::is_same_v<metal::remove_reference_t<thread float&>, float> &&
                  metal::is_same_v<metal::remove_const_t<const device int*>, const device int*>,
              "remove_cv");
static_assert(metal::is_convertible_v<half, float> && metal::is_convertible_v<float, half> &&
                  !metal::is_convertible_v<float4, float>,
              "is_convertible");
static_assert(metal::integral_constant<int, 3>::value == 3 && metal::true_type::value && !metal::false_type::value &&
                  metal::bool_constant<true>::value,
              "integral_constant");

// AccT picks the accumulation type the way MLX's reductions do: float for
// the floating-point types, int for signed and uint for unsigned integers.
template <typename T>
using AccT = metal::conditional_t<metal::is_floating_point_v<T>, float,
                                  metal::conditional_t<metal::is_signed_v<T>, int, uint>>;
static_assert(metal::is_same_v<AccT<half>, float> && metal::is_same_v<AccT<short>, int> &&
                  metal::is_same_v<AccT<uchar>, uint>,
              "AccT");

// can_convert_to is MLX's constant bool guarding a converting constructor.
template <typename T>
static constexpr constant bool can_convert_to_float =
    !metal::is_same_v<T, float> && metal::is_convertible_v<T, float>;

// widen converts a floating-point value to float; the overload for
// integers (enable_if on is_integral) offsets it so the two are told apart.
template <typename T, typename = metal::enable_if_t<metal::is_floating_point_v<T>>>
METAL_FUNC float widen(T x) {
  return float(x);
}
template <typename T, typename metal::enable_if<metal::is_integral_v<T>, int>::type = 0>
METAL_FUNC float widen(T x) {
  return float(x) + 0.5f;
}

// row_sum adds N values of T into AccT<T>; a vector type adds its
// vec_elements components each.
template <typename T, int N>
METAL_FUNC AccT<T> row_sum(device const T* x) {
  AccT<T> acc = 0;
  for (int i = 0; i < N; i++) {
    acc += AccT<T>(x[i]);
  }
  return acc;
}

// flip_sign flips the sign bit of each component, through the unsigned
// type of the same shape.
template <typename T>
METAL_FUNC T flip_sign(T x) {
  using U = metal::make_unsigned_t<T>;
  constexpr uint kBits = sizeof(U) * 8 / metal::vec_elements<U>::value;
  return as_type<T>(U(as_type<U>(x) ^ (U(1) << (kBits - 1))));
}

// traits runs the helpers on each thread's inputs: row sums in half, short
// and uchar (one row of 8 per thread), widen of each, and a sign flip of an
// int4.
kernel void traits(device const half* xh [[buffer(0)]],
                   device const short* xs [[buffer(1)]],
                   device const uchar* xu [[buffer(2)]],
                   device const int4* xi [[buffer(3)]],
                   device uint* out [[buffer(4)]],
                   uint i [[thread_position_in_grid]]) {
  constexpr int kN = 8;
  float sh = row_sum<half, kN>(xh + i * kN);
  int ss = row_sum<short, kN>(xs + i * kN);
  uint su = row_sum<uchar, kN>(xu + i * kN);
  device uint* o = out + i * 8;
  o[0] = as_type<uint>(sh);
  o[1] = uint(ss);
  o[2] = su;
  o[3] = as_type<uint>(widen(xh[i * kN]) + widen(xs[i * kN]));
  int4 f = flip_sign(xi[i]);
  o[4] = uint(f.x);
  o[5] = uint(f.w);
  o[6] = uint(can_convert_to_float<half>) | uint(can_convert_to_float<float>) << 1 |
         uint(metal::vec_elements<decltype(f)>::value) << 2;
  o[7] = uint(metal::is_same_v<decltype(sh + widen(xs[0])), float>);
}
