#include <metal_stdlib>
#include <metal_limits>
using namespace metal;

// Limits is MLX's pattern: per type, the identity of max and min, taken
// from metal::numeric_limits (infinities for the floating-point types).
template <typename U>
struct Limits {
  static const constant U max = metal::numeric_limits<U>::max();
  static const constant U min = metal::numeric_limits<U>::min();
};

#define instantiate_float_limit(type)                                                \
  template <>                                                                        \
  struct Limits<type> {                                                              \
    static constexpr constant type max = metal::numeric_limits<type>::infinity();    \
    static constexpr constant type min = -metal::numeric_limits<type>::infinity();   \
    static constexpr constant type finite_max = metal::numeric_limits<type>::max();  \
    static constexpr constant type finite_min = -metal::numeric_limits<type>::max(); \
  };

instantiate_float_limit(half)
instantiate_float_limit(float)
instantiate_float_limit(bfloat)

static_assert(Limits<int>::max == INT_MAX && Limits<uint>::min == 0, "integer limits");
static_assert(Limits<float>::finite_max == FLT_MAX && Limits<half>::finite_max == HALF_MAX, "float limits");
static_assert(metal::numeric_limits<half>::digits == 11 && metal::numeric_limits<bfloat>::digits == 8, "digits");
static_assert(metal::numeric_limits<half>::has_infinity && !metal::numeric_limits<int>::has_infinity, "has_infinity");

// bits is the bit pattern of a floating-point scalar, widened to a uint.
uint bits(float x) { return as_type<uint>(x); }
uint bits(half x) { return as_type<ushort>(x); }
uint bits(bfloat x) { return as_type<ushort>(x); }

// limits_table writes every limit of float, half, bfloat and the integer
// types, one word each, in a fixed order (see the Go side).
kernel void limits_table(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  if (i != 0) {
    return;
  }
  uint k = 0;
  out[k++] = bits(metal::numeric_limits<float>::min());
  out[k++] = bits(metal::numeric_limits<float>::max());
  out[k++] = bits(metal::numeric_limits<float>::lowest());
  out[k++] = bits(metal::numeric_limits<float>::epsilon());
  out[k++] = bits(metal::numeric_limits<float>::infinity());
  out[k++] = bits(metal::numeric_limits<float>::quiet_NaN());
  out[k++] = bits(metal::numeric_limits<float>::denorm_min());
  out[k++] = bits(metal::numeric_limits<float>::round_error());
  out[k++] = bits(metal::numeric_limits<half>::min());
  out[k++] = bits(metal::numeric_limits<half>::max());
  out[k++] = bits(metal::numeric_limits<half>::lowest());
  out[k++] = bits(metal::numeric_limits<half>::epsilon());
  out[k++] = bits(metal::numeric_limits<half>::infinity());
  out[k++] = bits(metal::numeric_limits<half>::quiet_NaN());
  out[k++] = bits(metal::numeric_limits<half>::denorm_min());
  out[k++] = bits(metal::numeric_limits<half>::round_error());
  out[k++] = bits(metal::numeric_limits<bfloat>::min());
  out[k++] = bits(metal::numeric_limits<bfloat>::max());
  out[k++] = bits(metal::numeric_limits<bfloat>::lowest());
  out[k++] = bits(metal::numeric_limits<bfloat>::epsilon());
  out[k++] = bits(metal::numeric_limits<bfloat>::infinity());
  out[k++] = bits(metal::numeric_limits<bfloat>::quiet_NaN());
  out[k++] = bits(metal::numeric_limits<bfloat>::denorm_min());
  out[k++] = bits(metal::numeric_limits<bfloat>::round_error());
  out[k++] = uint(metal::numeric_limits<char>::min());
  out[k++] = uint(metal::numeric_limits<uchar>::max());
  out[k++] = uint(metal::numeric_limits<short>::min());
  out[k++] = uint(metal::numeric_limits<ushort>::max());
  out[k++] = uint(metal::numeric_limits<int>::min());
  out[k++] = uint(metal::numeric_limits<int>::max());
  out[k++] = metal::numeric_limits<uint>::max();
  out[k++] = uint(metal::numeric_limits<long>::min() >> 32);
  out[k++] = uint(metal::numeric_limits<ulong>::max() >> 1);
  out[k++] = uint(metal::numeric_limits<float>::digits);
  out[k++] = uint(metal::numeric_limits<half>::max_exponent);
  out[k++] = uint(metal::numeric_limits<half>::min_exponent);
  out[k++] = uint(metal::numeric_limits<bfloat>::max_exponent);
  out[k++] = uint(metal::numeric_limits<int>::digits);
  out[k++] = uint(metal::numeric_limits<half>::is_signed) | uint(metal::numeric_limits<uint>::is_signed) << 1 |
             uint(metal::numeric_limits<half>::is_integer) << 2 | uint(metal::numeric_limits<short>::is_integer) << 3 |
             uint(metal::numeric_limits<half>::has_quiet_NaN) << 4 | uint(metal::numeric_limits<bfloat>::is_iec559) << 5 |
             uint(metal::numeric_limits<half>::is_iec559) << 6 | uint(metal::numeric_limits<bool>::is_specialized) << 7;
  out[k++] = bits(Limits<half>::min);
  out[k++] = bits(Limits<bfloat>::finite_min);
  out[k++] = bits(float(INFINITY)) ^ bits(HUGE_VALF) ^ bits(MAXFLOAT);
  out[k++] = bits(HUGE_VALH) ^ bits(MAXHALF) << 16;
  out[k++] = uint(INT_MIN) ^ UINT_MAX ^ uint(SHRT_MAX) ^ uint(CHAR_BIT);
}

// softmax_rows is a masked softmax over rows of 32 (one simdgroup per row)
// in the way MLX writes it: the running maximum starts from Limits<T>::min
// (-inf), masked entries are -inf, and a fully masked row gives zeros.
// Inputs are integers, so exp2 of a difference is exact.
template <typename T>
kernel void softmax_rows(device const T* x [[buffer(0)]],
                         device const uint* mask [[buffer(1)]],
                         device T* y [[buffer(2)]],
                         uint gid [[thread_position_in_grid]],
                         uint lane [[thread_index_in_simdgroup]]) {
  uint row = gid / 32;
  T v = ((mask[row] >> lane) & 1) != 0 ? Limits<T>::min : x[gid];
  T m = simd_max(max(v, Limits<T>::min));
  T e = m == Limits<T>::min ? T(0) : exp2(v - m);
  T s = simd_sum(e);
  y[gid] = s == T(0) ? T(0) : T(e / s);
}

template [[host_name("softmax_f32")]] kernel decltype(softmax_rows<float>) softmax_rows<float>;
template [[host_name("softmax_f16")]] kernel decltype(softmax_rows<half>) softmax_rows<half>;
