// metal_array.h — <metal_array>: metal::array<T, N>, a fixed-size array
// with value semantics, and metal::array_ref<T>, a read-only view of
// contiguous elements (a pointer and a count).
//
// array<T, N> is an aggregate laid out exactly as T[N] (so it may sit in a
// struct shared with the host), initialised with braces
// (`array<int, 3> a = {1, 2, 3};`). Element access is not bounds-checked,
// as on the GPU.
#pragma once
#include <cstddef>

#include "metal_scalar.h"

namespace metal {

template <class T, size_t N>
struct array {
  T mtl_elems[N];

  typedef T value_type;
  typedef size_t size_type;
  typedef T& reference;
  typedef const T& const_reference;
  typedef T* iterator;
  typedef const T* const_iterator;

  constexpr T& operator[](size_t i) { return mtl_elems[i]; }
  constexpr const T& operator[](size_t i) const { return mtl_elems[i]; }
  constexpr T& front() { return mtl_elems[0]; }
  constexpr const T& front() const { return mtl_elems[0]; }
  constexpr T& back() { return mtl_elems[N - 1]; }
  constexpr const T& back() const { return mtl_elems[N - 1]; }
  constexpr T* data() { return mtl_elems; }
  constexpr const T* data() const { return mtl_elems; }
  constexpr T* begin() { return mtl_elems; }
  constexpr const T* begin() const { return mtl_elems; }
  constexpr const T* cbegin() const { return mtl_elems; }
  constexpr T* end() { return mtl_elems + N; }
  constexpr const T* end() const { return mtl_elems + N; }
  constexpr const T* cend() const { return mtl_elems + N; }
  constexpr size_t size() const { return N; }
  constexpr size_t max_size() const { return N; }
  constexpr bool empty() const { return N == 0; }
};

// array<T, 0> has no elements; begin() == end().
template <class T>
struct array<T, 0> {
  typedef T value_type;
  typedef size_t size_type;
  typedef T& reference;
  typedef const T& const_reference;
  typedef T* iterator;
  typedef const T* const_iterator;

  constexpr T* data() { return nullptr; }
  constexpr const T* data() const { return nullptr; }
  constexpr T* begin() { return nullptr; }
  constexpr const T* begin() const { return nullptr; }
  constexpr const T* cbegin() const { return nullptr; }
  constexpr T* end() { return nullptr; }
  constexpr const T* end() const { return nullptr; }
  constexpr const T* cend() const { return nullptr; }
  constexpr size_t size() const { return 0; }
  constexpr size_t max_size() const { return 0; }
  constexpr bool empty() const { return true; }
};

// array_ref<T> views size() elements starting at data(); it does not own
// them, and they are read-only through it.
template <class T>
struct array_ref {
  typedef T value_type;
  typedef size_t size_type;
  typedef const T& const_reference;
  typedef const T* const_iterator;
  typedef const T* iterator;

  constexpr array_ref() : mtl_ptr(nullptr), mtl_n(0) {}
  constexpr array_ref(const T* p, size_t n) : mtl_ptr(p), mtl_n(n) {}
  constexpr array_ref(const T* first, const T* last) : mtl_ptr(first), mtl_n(size_t(last - first)) {}
  template <size_t N>
  constexpr array_ref(const array<T, N>& a) : mtl_ptr(a.data()), mtl_n(N) {}
  template <size_t N>
  constexpr array_ref(const T (&a)[N]) : mtl_ptr(a), mtl_n(N) {}

  constexpr const T& operator[](size_t i) const { return mtl_ptr[i]; }
  constexpr const T& front() const { return mtl_ptr[0]; }
  constexpr const T& back() const { return mtl_ptr[mtl_n - 1]; }
  constexpr const T* data() const { return mtl_ptr; }
  constexpr const T* begin() const { return mtl_ptr; }
  constexpr const T* cbegin() const { return mtl_ptr; }
  constexpr const T* end() const { return mtl_ptr + mtl_n; }
  constexpr const T* cend() const { return mtl_ptr + mtl_n; }
  constexpr size_t size() const { return mtl_n; }
  constexpr bool empty() const { return mtl_n == 0; }

  const T* mtl_ptr;
  size_t mtl_n;
};

// make_array_ref makes an array_ref of a pointer and a count, a pointer
// range, a metal::array or a built-in array.
template <class T>
constexpr array_ref<T> make_array_ref(const T* p, size_t n) {
  return array_ref<T>(p, n);
}
template <class T>
constexpr array_ref<T> make_array_ref(const T* first, const T* last) {
  return array_ref<T>(first, last);
}
template <class T, size_t N>
constexpr array_ref<T> make_array_ref(const array<T, N>& a) {
  return array_ref<T>(a);
}
template <class T, size_t N>
constexpr array_ref<T> make_array_ref(const T (&a)[N]) {
  return array_ref<T>(a);
}

}  // namespace metal
