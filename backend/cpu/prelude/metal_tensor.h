// metal_tensor.h — MSL 4 tensors (tensor, its tensor_handle, tensor_inline
// and tensor_offset kinds, slices), cooperative_tensor, the execution
// scopes, and MetalPerformancePrimitives' mpp::tensor_ops::matmul2d.
//
// A tensor is a view: a base pointer, per dimension an extent and a stride
// in elements (dimension 0 is the innermost, the column of a matrix), and
// the bounds it was made with. A slice keeps the bounds of the tensor it
// was taken from and moves its origin, by any offset, negative ones too
// (tO.slice(0, -row * IH)); its dynamic extents are the parent's minus the
// offset, its static ones (slice<E0, E1>(x, y)) as given. An element whose
// coordinates, moved back to the parent, fall outside the parent's bounds
// reads as zero and a store to it is dropped: that is the edge handling
// matmul2d relies on for ragged tiles.
//
// matmul2d(M, N, K) computes destination[n, m] = sum over k of
// left[k, m] * right[n, k] (left[m, k] transposed, right[k, n] transposed),
// plus the destination's old value in multiply_accumulate mode. The order
// of the sum is a choice of metalab's, the same on the cpu and cuda
// backends so their bits agree: the accumulator is a float starting at 0
// (multiply) or at the destination's value (multiply_accumulate), each
// step adds float(left) * float(right), the product rounded to float and
// then the sum rounded to float (never fused), k = 0, 1, ..., K-1 in
// order; the result is converted to the destination's element type once.
// relaxed_precision changes nothing. Integer elements accumulate the same
// way in int32_t.
//
// Execution scopes: execution_thread (one thread computes the whole
// result), execution_simdgroup (32 lanes), execution_simdgroups<N> (N
// simd groups, the threads with simdgroup_index_in_threadgroup / N equal),
// execution_threads<N>. Every participating thread computes its own share
// of the destination from the operands in memory, so run() needs no
// exchange between threads: destination element e (row-major, e = m * N +
// n) belongs to the scope's thread e % T (T threads in the scope), as
// element e / T of its cooperative tensor. That distribution is metalab's
// choice; Metal leaves it opaque (kernels reach it only through
// get_multidimensional_index).
#pragma once
#include <cstddef>
#include <cstdint>

#include "metal_array.h"
#include "metal_scalar.h"
#include "metal_simd.h"

namespace metal {

constexpr size_t dynamic_extent = size_t(-1);

// extents<I, E...> holds one extent per dimension; E is its static value
// or dynamic_extent. A constructor takes either every extent or only the
// dynamic ones.
template <class I, size_t... E>
struct extents {
  typedef I index_type;
  static constexpr size_t mtl_rank = sizeof...(E);
  I mtl_e[mtl_rank > 0 ? mtl_rank : 1];

  MTL_FN static constexpr size_t rank() { return mtl_rank; }
  MTL_FN static constexpr size_t static_extent(size_t r) {
    constexpr size_t s[] = {E...};
    return s[r];
  }
  MTL_FN static constexpr size_t rank_dynamic() {
    size_t n = 0;
    for (size_t r = 0; r < mtl_rank; r++) n += static_extent(r) == dynamic_extent;
    return n;
  }
  MTL_FN constexpr extents() : mtl_e{} {
    for (size_t r = 0; r < mtl_rank; r++) mtl_e[r] = static_extent(r) == dynamic_extent ? I(0) : I(static_extent(r));
  }
  template <class... J, class = typename std::enable_if<sizeof...(J) != 0>::type>
  MTL_FN constexpr extents(J... v) : mtl_e{} {
    static_assert(sizeof...(J) == mtl_rank || sizeof...(J) == rank_dynamic(),
                  "extents takes every extent or only the dynamic ones");
    const I given[] = {I(v)...};
    size_t d = 0;
    for (size_t r = 0; r < mtl_rank; r++) {
      if (sizeof...(J) == mtl_rank)
        mtl_e[r] = given[r];
      else
        mtl_e[r] = static_extent(r) == dynamic_extent ? given[d++] : I(static_extent(r));
    }
  }
  MTL_FN constexpr I extent(size_t r) const { return mtl_e[r]; }
};

namespace mtl_detail {
template <class I, size_t N, size_t... E>
struct dext {
  typedef typename dext<I, N - 1, E..., dynamic_extent>::type type;
};
template <class I, size_t... E>
struct dext<I, 0, E...> {
  typedef extents<I, E...> type;
};
}  // namespace mtl_detail

template <class I, size_t N>
using dextents = typename mtl_detail::dext<I, N>::type;

// The kinds of tensor: a kernel argument (tensor_handle, the default), one
// made in the shader from a pointer (tensor_inline), and a slice
// (tensor_offset). metalab represents all three the same way.
struct tensor_handle {};
struct tensor_inline {};
struct tensor_offset {};

// Execution scopes of the tensor operations.
template <int N>
struct execution_threads {
  static constexpr int mtl_threads = N;
  MTL_FN static uint32_t mtl_index() { return mtl_rt::ctx().thread_index_in_threadgroup % uint32_t(N); }
};
template <int N>
struct execution_simdgroups {
  static constexpr int mtl_threads = 32 * N;
  MTL_FN static uint32_t mtl_index() {
    const mtl_rt::ThreadCtx& c = mtl_rt::ctx();
    return (c.simdgroup_index_in_threadgroup % uint32_t(N)) * 32u + (c.thread_index_in_simdgroup & 31u);
  }
};
typedef execution_threads<1> execution_thread;
typedef execution_simdgroups<1> execution_simdgroup;

template <class T, class Extents, class Kind = tensor_handle>
struct tensor {
  typedef T element_type;
  typedef typename std::remove_cv<T>::type value_type;
  typedef typename Extents::index_type index_type;
  typedef Extents extents_type;
  static constexpr size_t mtl_rank = Extents::mtl_rank;

  T* mtl_p;                     // element at the bounds' origin
  index_type mtl_bound[mtl_rank];  // the bounds' extents
  index_type mtl_off[mtl_rank];    // this view's origin within the bounds
  index_type mtl_stride[mtl_rank];
  Extents mtl_ext;
  value_type mtl_sink;  // where an out-of-bounds element is read and stored

  MTL_FN tensor() : mtl_p(nullptr), mtl_bound{}, mtl_off{}, mtl_stride{}, mtl_ext(), mtl_sink() {}
  // Packed strides: stride 1 in dimension 0, each next the product of the
  // extents before it.
  MTL_FN tensor(T* p, Extents e) : mtl_p(p), mtl_bound{}, mtl_off{}, mtl_stride{}, mtl_ext(e), mtl_sink() {
    index_type s = 1;
    for (size_t r = 0; r < mtl_rank; r++) {
      mtl_bound[r] = e.extent(r);
      mtl_stride[r] = s;
      s *= e.extent(r);
    }
  }
  template <class S>
  MTL_FN tensor(T* p, Extents e, const S& strides)
      : mtl_p(p), mtl_bound{}, mtl_off{}, mtl_stride{}, mtl_ext(e), mtl_sink() {
    for (size_t r = 0; r < mtl_rank; r++) {
      mtl_bound[r] = e.extent(r);
      mtl_stride[r] = index_type(strides[r]);
    }
  }
  // A tensor converts to another kind, or to one of const elements.
  template <class U, class K2>
  MTL_FN tensor(const tensor<U, Extents, K2>& o)
      : mtl_p(o.mtl_p), mtl_bound{}, mtl_off{}, mtl_stride{}, mtl_ext(o.mtl_ext), mtl_sink() {
    for (size_t r = 0; r < mtl_rank; r++) {
      mtl_bound[r] = o.mtl_bound[r];
      mtl_off[r] = o.mtl_off[r];
      mtl_stride[r] = o.mtl_stride[r];
    }
  }

  MTL_FN static constexpr size_t get_rank() { return mtl_rank; }
  MTL_FN index_type get_extent(size_t r) const { return mtl_ext.extent(r); }
  MTL_FN index_type get_stride(size_t r) const { return mtl_stride[r]; }
  MTL_FN Extents get_extents() const { return mtl_ext; }
  MTL_FN T* get_data_pointer() const { return mtl_p; }

  // mtl_at is the element at coordinates c of this view, or nullptr
  // outside the bounds.
  MTL_FN T* mtl_at(const index_type* c) const {
    ptrdiff_t o = 0;
    for (size_t r = 0; r < mtl_rank; r++) {
      index_type x = index_type(mtl_off[r] + c[r]);
      if (x < 0 || x >= mtl_bound[r]) return nullptr;
      o += ptrdiff_t(x) * ptrdiff_t(mtl_stride[r]);
    }
    return mtl_p + o;
  }
  MTL_FN value_type mtl_get(const index_type* c) const {
    T* p = mtl_at(c);
    return p ? value_type(*p) : value_type(0);
  }
  MTL_FN void mtl_put(const index_type* c, value_type v) const {
    T* p = mtl_at(c);
    if (p) *p = v;
  }
  MTL_FN T& mtl_ref(const index_type* c) {
    T* p = mtl_at(c);
    if (p) return *p;
    mtl_sink = value_type(0);
    return const_cast<T&>(mtl_sink);
  }

  // t(x, y) and t[array] are the element at those coordinates.
  template <class... J>
  MTL_FN T& operator()(J... c) {
    static_assert(sizeof...(J) == mtl_rank, "one coordinate per dimension");
    index_type cs[] = {index_type(c)...};
    return mtl_ref(cs);
  }
  template <class A>
  MTL_FN T& operator[](const A& c) {
    index_type cs[mtl_rank];
    for (size_t r = 0; r < mtl_rank; r++) cs[r] = index_type(c[r]);
    return mtl_ref(cs);
  }

  // slice(o...) is the view with its origin moved by o, dynamic extents
  // (extents minus offsets) unless SE gives static ones.
  template <size_t... SE, class... J>
  MTL_FN tensor<T, typename std::conditional<sizeof...(SE) == 0, Extents, extents<index_type, SE...>>::type, tensor_offset>
  slice(J... o) const {
    static_assert(sizeof...(J) == mtl_rank, "slice takes one offset per dimension");
    static_assert(sizeof...(SE) == 0 || sizeof...(SE) == mtl_rank, "slice<...> takes one extent per dimension");
    typedef typename std::conditional<sizeof...(SE) == 0, Extents, extents<index_type, SE...>>::type E2;
    tensor<T, E2, tensor_offset> s;
    const index_type os[] = {index_type(o)...};
    s.mtl_p = mtl_p;
    for (size_t r = 0; r < mtl_rank; r++) {
      s.mtl_bound[r] = mtl_bound[r];
      s.mtl_off[r] = index_type(mtl_off[r] + os[r]);
      s.mtl_stride[r] = mtl_stride[r];
      if (E2::static_extent(r) == dynamic_extent) s.mtl_ext.mtl_e[r] = index_type(mtl_ext.extent(r) - os[r]);
    }
    return s;
  }
};

// A tensor made from a pointer and extents is a tensor_inline.
template <class T, class I, size_t... E>
tensor(T*, extents<I, E...>) -> tensor<T, extents<I, E...>, tensor_inline>;
template <class T, class I, size_t... E, class S>
tensor(T*, extents<I, E...>, S) -> tensor<T, extents<I, E...>, tensor_inline>;

// A cooperative_tensor is one thread's share of a tensor distributed over
// an execution scope; Layout says which elements it holds.
template <class T, class Extents, class Layout>
struct cooperative_tensor {
  typedef T element_type;
  typedef T value_type;
  typedef typename Extents::index_type index_type;
  static constexpr uint16_t mtl_capacity = Layout::mtl_capacity;
  T mtl_e[mtl_capacity];

  MTL_FN cooperative_tensor() : mtl_e{} {}

  MTL_FN static constexpr uint16_t get_capacity() { return mtl_capacity; }
  MTL_FN T& operator[](size_t i) { return mtl_e[i]; }
  MTL_FN const T& operator[](size_t i) const { return mtl_e[i]; }
  MTL_FN static bool is_valid_element(size_t i) { return Layout::mtl_valid(uint32_t(i)); }
  // The coordinates of element i, dimension 0 first ([column, row] of a
  // matrix).
  MTL_FN static array<index_type, Extents::mtl_rank> get_multidimensional_index(size_t i) {
    array<index_type, Extents::mtl_rank> a;
    Layout::template mtl_coords<index_type>(uint32_t(i), &a[0]);
    return a;
  }

  struct iterator {
    cooperative_tensor* mtl_t;
    uint16_t mtl_i;
    MTL_FN void mtl_skip() {
      while (mtl_i < mtl_capacity && !is_valid_element(mtl_i)) mtl_i++;
    }
    MTL_FN T& operator*() const { return mtl_t->mtl_e[mtl_i]; }
    MTL_FN iterator& operator++() {
      mtl_i++;
      mtl_skip();
      return *this;
    }
    MTL_FN iterator operator++(int) {
      iterator o = *this;
      ++*this;
      return o;
    }
    MTL_FN bool operator==(const iterator& o) const { return mtl_i == o.mtl_i; }
    MTL_FN bool operator!=(const iterator& o) const { return mtl_i != o.mtl_i; }
    MTL_FN array<index_type, Extents::mtl_rank> get_multidimensional_index() const {
      return cooperative_tensor::get_multidimensional_index(mtl_i);
    }
  };
  MTL_FN iterator begin() {
    iterator it{this, 0};
    it.mtl_skip();
    return it;
  }
  MTL_FN iterator end() { return iterator{this, mtl_capacity}; }

  // load and store move this thread's valid elements from and to a tensor
  // of the same shape (bounds as for any tensor access).
  template <class U, class E2, class K>
  MTL_FN void load(const tensor<U, E2, K>& t) {
    for (uint16_t i = 0; i < mtl_capacity; i++) {
      if (!is_valid_element(i)) continue;
      typename E2::index_type c[Extents::mtl_rank];
      Layout::template mtl_coords<typename E2::index_type>(i, c);
      mtl_e[i] = T(t.mtl_get(c));
    }
  }
  template <class U, class E2, class K>
  MTL_FN void store(const tensor<U, E2, K>& t) const {
    for (uint16_t i = 0; i < mtl_capacity; i++) {
      if (!is_valid_element(i)) continue;
      typename E2::index_type c[Extents::mtl_rank];
      Layout::template mtl_coords<typename E2::index_type>(i, c);
      t.mtl_put(c, typename tensor<U, E2, K>::value_type(mtl_e[i]));
    }
  }
};

}  // namespace metal

namespace mpp {
namespace tensor_ops {

struct matmul2d_descriptor {
  enum class mode { multiply, multiply_accumulate };
  int m, n, k;
  bool transpose_left, transpose_right, relaxed_precision;
  mode matmul_mode;
  constexpr matmul2d_descriptor(int m_, int n_, int k_ = int(metal::dynamic_extent), bool transpose_left_ = false,
                                bool transpose_right_ = false, bool relaxed_precision_ = false,
                                mode matmul_mode_ = mode::multiply)
      : m(m_), n(n_), k(k_), transpose_left(transpose_left_), transpose_right(transpose_right_),
        relaxed_precision(relaxed_precision_), matmul_mode(matmul_mode_) {}
};

namespace mtl_detail {

// dest_layout is the distribution of an M x N destination over a scope of
// Threads threads: element e = m * N + n is element e / Threads of thread
// e % Threads.
template <int M, int N, class Scope>
struct dest_layout {
  static constexpr int mtl_threads = Scope::mtl_threads;
  static constexpr uint16_t mtl_capacity = uint16_t((M * N + mtl_threads - 1) / mtl_threads);
  MTL_FN static uint32_t mtl_linear(uint32_t i) { return i * uint32_t(mtl_threads) + Scope::mtl_index(); }
  MTL_FN static bool mtl_valid(uint32_t i) { return i < mtl_capacity && mtl_linear(i) < uint32_t(M * N); }
  template <class I>
  MTL_FN static void mtl_coords(uint32_t i, I* c) {
    uint32_t e = mtl_linear(i);
    c[0] = I(e % uint32_t(N));
    c[1] = I(e / uint32_t(N));
  }
};

// The accumulator of an element type: float, or int32_t for integers.
template <class T>
struct acc_of {
  typedef typename std::conditional<std::is_integral<T>::value, int32_t, float>::type type;
};

// mul and add are one rounded step each; on the GPU the intrinsics keep
// nvcc from fusing them.
inline float mtl_mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
inline float mtl_add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
inline int32_t mtl_mul(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); }
inline int32_t mtl_add(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }

}  // namespace mtl_detail

// matmul2d's descriptor is spelled as its fields here: C++17 takes no
// class-typed template argument, so the translator writes
// matmul2d<desc, Scope> as matmul2d<MTL_MATMUL2D_DESC(desc), Scope>.
#define MTL_MATMUL2D_DESC(d)                                                                                    \
  (d).m, (d).n, (d).k, (d).transpose_left, (d).transpose_right, (d).relaxed_precision, \
      int((d).matmul_mode)

template <int M, int N, int K, bool TL, bool TR, bool RP, int Mode, class Scope = metal::execution_simdgroup,
          class... Rest>
struct matmul2d {
  static constexpr bool mtl_accumulate = Mode == int(matmul2d_descriptor::mode::multiply_accumulate);

  template <class L, class R, class D>
  using mtl_dest_t = metal::cooperative_tensor<D, metal::dextents<int32_t, 2>, mtl_detail::dest_layout<M, N, Scope>>;

  // get_destination_cooperative_tensor<decltype(left), decltype(right), T>()
  // is this thread's share of an M x N destination of T, zero-filled.
  template <class L, class R, class D>
  MTL_FN mtl_dest_t<L, R, D> get_destination_cooperative_tensor() const {
    return mtl_dest_t<L, R, D>();
  }

  // mtl_element is destination element (n, m) from the operands, started
  // at acc.
  template <class A, class L, class R>
  MTL_FN static A mtl_element(const L& left, const R& right, int32_t n, int32_t m, A acc) {
    int32_t kk = K > 0 ? K : int32_t(TL ? left.get_extent(1) : left.get_extent(0));
    for (int32_t k = 0; k < kk; k++) {
      int32_t lc[2] = {TL ? m : k, TL ? k : m};
      int32_t rc[2] = {TR ? k : n, TR ? n : k};
      A a = A(left.mtl_get(lc));
      A b = A(right.mtl_get(rc));
      acc = mtl_detail::mtl_add(acc, mtl_detail::mtl_mul(a, b));
    }
    return acc;
  }

  // run into a tensor in memory: each thread of the scope computes and
  // stores its own elements.
  template <class L, class R, class DT, class DE, class DK>
  MTL_FN void run(const L& left, const R& right, const metal::tensor<DT, DE, DK>& dest) const {
    typedef typename metal::tensor<DT, DE, DK>::value_type V;
    typedef typename mtl_detail::acc_of<V>::type A;
    typedef mtl_detail::dest_layout<M, N, Scope> Lay;
    for (uint16_t i = 0; i < Lay::mtl_capacity; i++) {
      if (!Lay::mtl_valid(i)) continue;
      int32_t c[2];
      Lay::template mtl_coords<int32_t>(i, c);
      if (c[0] >= int32_t(dest.get_extent(0)) || c[1] >= int32_t(dest.get_extent(1))) continue;
      A acc = mtl_accumulate ? A(dest.mtl_get(c)) : A(0);
      dest.mtl_put(c, V(mtl_element<A>(left, right, c[0], c[1], acc)));
    }
  }

  // run into a cooperative destination: this thread's own elements.
  template <class L, class R, class D, class DE, class Lay>
  MTL_FN void run(const L& left, const R& right, metal::cooperative_tensor<D, DE, Lay>& dest) const {
    typedef typename mtl_detail::acc_of<D>::type A;
    for (uint16_t i = 0; i < Lay::mtl_capacity; i++) {
      if (!Lay::mtl_valid(i)) continue;
      int32_t c[2];
      Lay::template mtl_coords<int32_t>(i, c);
      A acc = mtl_accumulate ? A(dest.mtl_e[i]) : A(0);
      dest.mtl_e[i] = D(mtl_element<A>(left, right, c[0], c[1], acc));
    }
  }
};

}  // namespace tensor_ops
}  // namespace mpp
