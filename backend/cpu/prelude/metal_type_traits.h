// metal_type_traits.h — <metal_type_traits>: the type traits kernels use in
// templates (metal::is_same_v, metal::enable_if_t, metal::conditional_t,
// metal::is_floating_point_v, ...), all constexpr and usable in
// static_assert.
//
// The C++ traits are the standard library's, brought into namespace metal.
// The ones whose answer differs in Metal are defined here:
// is_floating_point, is_arithmetic, is_scalar and is_signed count half and
// bfloat as the floating-point scalars they are; is_vector and vec_elements
// describe Metal vectors (packed or not); make_signed and make_unsigned
// also map integer vectors (int4 <-> uint4).
//
// Left out on purpose: is_empty, make_void, void_t, is_static and
// pointer_element. MLX's kernels define those in namespace metal
// themselves, so providing them would be a redefinition there.
#pragma once
#include <type_traits>

#include "metal_scalar.h"
#include "metal_vector.h"

namespace metal {

using std::bool_constant;
using std::false_type;
using std::integral_constant;
using std::true_type;

using std::conditional;
using std::conditional_t;
using std::enable_if;
using std::enable_if_t;

using std::is_convertible;
using std::is_convertible_v;
using std::is_same;
using std::is_same_v;
using std::is_base_of;
using std::is_base_of_v;
using std::is_constructible;
using std::is_constructible_v;
using std::is_trivially_copyable;
using std::is_trivially_copyable_v;

using std::is_array;
using std::is_array_v;
using std::is_class;
using std::is_class_v;
using std::is_const;
using std::is_const_v;
using std::is_enum;
using std::is_enum_v;
using std::is_function;
using std::is_function_v;
using std::is_integral;
using std::is_integral_v;
using std::is_lvalue_reference;
using std::is_lvalue_reference_v;
using std::is_pointer;
using std::is_pointer_v;
using std::is_reference;
using std::is_reference_v;
using std::is_rvalue_reference;
using std::is_rvalue_reference_v;
using std::is_union;
using std::is_union_v;
using std::is_unsigned;
using std::is_unsigned_v;
using std::is_void;
using std::is_void_v;
using std::is_volatile;
using std::is_volatile_v;

using std::add_const;
using std::add_const_t;
using std::add_cv;
using std::add_cv_t;
using std::add_lvalue_reference;
using std::add_lvalue_reference_t;
using std::add_pointer;
using std::add_pointer_t;
using std::add_rvalue_reference;
using std::add_rvalue_reference_t;
using std::add_volatile;
using std::add_volatile_t;
using std::decay;
using std::decay_t;
using std::remove_all_extents;
using std::remove_all_extents_t;
using std::remove_const;
using std::remove_const_t;
using std::remove_cv;
using std::remove_cv_t;
using std::remove_extent;
using std::remove_extent_t;
using std::remove_pointer;
using std::remove_pointer_t;
using std::remove_reference;
using std::remove_reference_t;
using std::remove_volatile;
using std::remove_volatile_t;
using std::underlying_type;
using std::underlying_type_t;

using std::alignment_of;
using std::alignment_of_v;
using std::extent;
using std::extent_v;
using std::rank;
using std::rank_v;

// is_floating_point is true for half, bfloat, float (and double, which
// host code may still mention), with any cv-qualification.
template <class T>
struct is_floating_point
    : bool_constant<std::is_floating_point<T>::value || mtl_detail::is_f16<typename std::remove_cv<T>::type>::value> {};
template <class T>
constexpr bool is_floating_point_v = is_floating_point<T>::value;

// is_arithmetic is true for the integer types, bool and the floating-point
// types above.
template <class T>
struct is_arithmetic : bool_constant<std::is_integral<T>::value || is_floating_point<T>::value> {};
template <class T>
constexpr bool is_arithmetic_v = is_arithmetic<T>::value;

// is_scalar is true for Metal's scalar types: bool, the integers and the
// floating-point types. (Unlike C++'s, it is false for pointers and
// enumerations, which Metal does not call scalars.)
template <class T>
struct is_scalar : is_arithmetic<T> {};
template <class T>
constexpr bool is_scalar_v = is_scalar<T>::value;

// is_signed is true for the signed integers and every floating-point type.
template <class T>
struct is_signed : bool_constant<std::is_signed<T>::value || is_floating_point<T>::value> {};
template <class T>
constexpr bool is_signed_v = is_signed<T>::value;

// is_fundamental is true for void, nullptr_t and the arithmetic types.
template <class T>
struct is_fundamental : bool_constant<std::is_fundamental<T>::value || is_arithmetic<T>::value> {};
template <class T>
constexpr bool is_fundamental_v = is_fundamental<T>::value;

namespace mtl_detail {
template <class T>
struct is_basic_vec : std::false_type {};
template <class T, int N, bool P>
struct is_basic_vec<basic_vec<T, N, P>> : std::true_type {};

template <class T, class = void>
struct vec_elements_of {};
template <class T>
struct vec_elements_of<T, typename std::enable_if<metal::is_scalar<T>::value>::type> : std::integral_constant<int, 1> {
  typedef T type;
};
template <class T, int N, bool P>
struct vec_elements_of<basic_vec<T, N, P>> : std::integral_constant<int, N> {
  typedef T type;
};
}  // namespace mtl_detail

// is_vector is true for vec<T, N> and packed_vec<T, N> (float4,
// packed_half3, ...), with any cv-qualification.
template <class T>
struct is_vector : mtl_detail::is_basic_vec<typename std::remove_cv<T>::type> {};
template <class T>
constexpr bool is_vector_v = is_vector<T>::value;

// vec_elements<T>::value is the number of components of a vector type
// (Metal's spelling), and 1 for a scalar; vec_elements<T>::type is the
// component type (T itself for a scalar).
template <class T>
struct vec_elements : mtl_detail::vec_elements_of<typename std::remove_cv<T>::type> {};
template <class T>
constexpr int vec_elements_v = vec_elements<T>::value;

// make_signed and make_unsigned map integer scalars as C++ does and
// integer vectors componentwise (uint4 <-> int4).
template <class T>
struct make_signed : std::make_signed<T> {};
template <class T, int N, bool P>
struct make_signed<basic_vec<T, N, P>> {
  typedef basic_vec<typename std::make_signed<T>::type, N, P> type;
};
template <class T>
using make_signed_t = typename make_signed<T>::type;
template <class T>
struct make_unsigned : std::make_unsigned<T> {};
template <class T, int N, bool P>
struct make_unsigned<basic_vec<T, N, P>> {
  typedef basic_vec<typename std::make_unsigned<T>::type, N, P> type;
};
template <class T>
using make_unsigned_t = typename make_unsigned<T>::type;

// __is_valid_simdgroup_type is the trait Metal's headers test before a
// simd-group function takes a type (candle's reduce.metal tests it too): the
// arithmetic scalars but bool, and vectors of them.
template <class T>
struct __is_valid_simdgroup_type
    : bool_constant<is_arithmetic<T>::value && !std::is_same<T, bool>::value> {};
template <class T>
struct __is_valid_simdgroup_type<const T> : __is_valid_simdgroup_type<T> {};
template <class T, int N, bool P>
struct __is_valid_simdgroup_type<basic_vec<T, N, P>> : __is_valid_simdgroup_type<T> {};

}  // namespace metal
