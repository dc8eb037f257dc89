// Macros, type traits and reduction operators shared by the MLX-style
// kernels.
#pragma once

#include <metal_stdlib>
using namespace metal;

#define MLX_MTL_PRAGMA_UNROLL _Pragma("clang loop unroll(full)")
#define METAL_FUNC inline __attribute__((always_inline))

#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

static constant constexpr const int SIMD_SIZE = 32;

// lowest value of a type, the identity of max
template <typename T>
struct Limits {
  static const constant T min = metal::numeric_limits<T>::lowest();
};

template <>
struct Limits<half> {
  static constexpr constant half min = -HUGE_VALH;
};

// reduction operators: the identity and how to combine, in the simdgroup
// and between two values
template <typename U>
struct Sum {
  static constexpr constant U init = U(0);
  METAL_FUNC U simd_reduce(U val) { return simd_sum(val); }
  METAL_FUNC U operator()(U a, U b) { return a + b; }
};

template <typename U>
struct Max {
  static constexpr constant U init = Limits<U>::min;
  METAL_FUNC U simd_reduce(U val) { return simd_max(val); }
  METAL_FUNC U operator()(U a, U b) { return a > b ? a : b; }
};

// a running maximum and normaliser, for one-pass softmax
template <typename T>
struct MD {
  T m;
  T d;
};
