// metal_simdgroup_event.h — simd-group asynchronous copies as
// metal-flash-attention uses them: metal::simdgroup_event with its
// async_copy (1d, and 2d tiles between device and threadgroup memory, with
// a clamp mode) and wait, metal::simdgroup_async_copy_clamp_mode, and the
// intrinsics under them, __metal_simdgroup_async_copy_1d,
// __metal_simdgroup_async_copy_2d and __metal_wait_simdgroup_events. None
// is in Metal's specification: metal-flash-attention declares the
// intrinsics itself, bound to Apple's AIR functions by __asm labels, and
// writes the wrapper around them; the prelude defines both, with the
// wrapper's shape (one 2d template serves both directions, since address
// spaces do not tell them apart here).
//
// Emulation model: the copy is a simd-group collective done at once, not
// asynchronously. Each lane copies the elements whose index in the tile is
// its lane modulo 32, so every element is written by exactly one lane;
// the wait is a simd-group barrier, after which every lane sees the whole
// tile. The 2d copy walks the destination tile (x columns, y rows):
// elements inside the source tile are copied, the rest are zero
// (clamp_to_zero, mode 0) or the nearest source element (clamp_to_edge,
// mode 1). A transposed copy only swaps the tile sizes, as the wrapper
// does. The event a copy returns is a token that wait ignores.
#pragma once

#include "metal_simd.h"
#include "metal_sync.h"
#include "metal_vector.h"

struct _simdgroup_event_t;
typedef _simdgroup_event_t* __metal_simdgroup_event_t;

namespace metal {
namespace mtl_detail {
inline uint32_t async_lane() { return mtl_rt::ctx().thread_index_in_simdgroup & 31u; }
inline void async_move(void* dst, const void* src, ulong size) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  const unsigned char* s = static_cast<const unsigned char*>(src);
  for (ulong b = 0; b < size; b++) d[b] = s[b];
}
}  // namespace mtl_detail
}  // namespace metal

inline _simdgroup_event_t* __metal_simdgroup_async_copy_1d(metal::ulong size, metal::ulong, void* dst,
                                                                const void* src, metal::ulong n) {
  for (metal::ulong i = metal::mtl_detail::async_lane(); i < n; i += 32)
    metal::mtl_detail::async_move(static_cast<unsigned char*>(dst) + i * size,
                                  static_cast<const unsigned char*>(src) + i * size, size);
  return nullptr;
}

inline _simdgroup_event_t* __metal_simdgroup_async_copy_2d(metal::ulong size, metal::ulong, void* dst,
                                                                metal::ulong dst_per_row, metal::ulong,
                                                                metal::ulong2 dst_tile, const void* src,
                                                                metal::ulong src_per_row, metal::ulong,
                                                                metal::ulong2 src_tile, metal::long2 offset,
                                                                int clamp_mode) {
  metal::ulong w = dst_tile.x, h = dst_tile.y;
  unsigned char* d = static_cast<unsigned char*>(dst);
  const unsigned char* s = static_cast<const unsigned char*>(src);
  for (metal::ulong e = metal::mtl_detail::async_lane(); e < w * h; e += 32) {
    metal::ulong x = e % w, y = e / w;
    long sx = long(x) + long(offset.x), sy = long(y) + long(offset.y);
    bool inside = sx >= 0 && sy >= 0 && metal::ulong(sx) < src_tile.x && metal::ulong(sy) < src_tile.y;
    unsigned char* to = d + (y * dst_per_row + x) * size;
    if (inside) {
      metal::mtl_detail::async_move(to, s + (metal::ulong(sy) * src_per_row + metal::ulong(sx)) * size, size);
    } else if (clamp_mode == 1 && src_tile.x > 0 && src_tile.y > 0) {
      metal::ulong cx = sx < 0 ? 0 : (metal::ulong(sx) >= src_tile.x ? src_tile.x - 1 : metal::ulong(sx));
      metal::ulong cy = sy < 0 ? 0 : (metal::ulong(sy) >= src_tile.y ? src_tile.y - 1 : metal::ulong(sy));
      metal::mtl_detail::async_move(to, s + (cy * src_per_row + cx) * size, size);
    } else {
      for (metal::ulong b = 0; b < size; b++) to[b] = 0;
    }
  }
  return nullptr;
}

inline void __metal_wait_simdgroup_events(int, _simdgroup_event_t**) {
  metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup);
}

namespace metal {

enum class simdgroup_async_copy_clamp_mode { clamp_to_zero = 0, clamp_to_edge = 1 };

struct simdgroup_event {
  _simdgroup_event_t* mtl_event;

  MTL_FN simdgroup_event() : mtl_event(nullptr) {}

  // async_copy(dst, src, n) copies n elements.
  template <class T>
  MTL_FN void async_copy(T* dst, const T* src, ulong n_elements) {
    mtl_event = __metal_simdgroup_async_copy_1d(sizeof(T), alignof(T), static_cast<void*>(dst),
                                                static_cast<const void*>(src), n_elements);
  }
  // async_copy(dst, dst_per_row, dst_tile, src, src_per_row, src_tile)
  // copies a tile (x columns, y rows) of elements_per_row-strided
  // matrices; see the model above for the parts outside src_tile.
  template <class T, class I, class J>
  MTL_FN void async_copy(T* dst, I dst_elements_per_row, ushort2 dst_tile_dimensions, const T* src,
                         J src_elements_per_row, ushort2 src_tile_dimensions, bool transpose_matrix = false,
                         simdgroup_async_copy_clamp_mode clamp_mode = simdgroup_async_copy_clamp_mode::clamp_to_zero) {
    static_assert(std::is_integral<I>::value && std::is_integral<J>::value, "elements per row are integers");
    if (transpose_matrix) {
      src_tile_dimensions = ushort2(src_tile_dimensions.y, src_tile_dimensions.x);
      dst_tile_dimensions = ushort2(dst_tile_dimensions.y, dst_tile_dimensions.x);
    }
    mtl_event = __metal_simdgroup_async_copy_2d(
        sizeof(T), alignof(T), static_cast<void*>(dst), ulong(dst_elements_per_row), 1,
        ulong2(ulong(dst_tile_dimensions.x), ulong(dst_tile_dimensions.y)), static_cast<const void*>(src),
        ulong(src_elements_per_row), 1, ulong2(ulong(src_tile_dimensions.x), ulong(src_tile_dimensions.y)), long2(0),
        static_cast<int>(clamp_mode));
  }
  // wait completes count events (all of the simd group's copies).
  MTL_FN static void wait(int count, simdgroup_event* events) {
    _simdgroup_event_t* e = events ? events->mtl_event : nullptr;
    __metal_wait_simdgroup_events(count, &e);
  }
};

}  // namespace metal
