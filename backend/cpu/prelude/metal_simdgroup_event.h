// metal_simdgroup_event.h — the simd-group asynchronous copy intrinsics
// that metal-flash-attention declares for itself (with __asm labels naming
// Apple's AIR functions) and wraps in its own metal::simdgroup_event:
// __metal_simdgroup_async_copy_1d, __metal_simdgroup_async_copy_2d and
// __metal_wait_simdgroup_events. They are not in Metal's specification;
// the prelude defines them, in the global namespace, with the parameters
// those declarations have once address spaces are gone (so a kernel's own
// declarations redeclare these).
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
#include <cstring>

#include "metal_simd.h"
#include "metal_sync.h"
#include "metal_vector.h"

struct _simdgroup_event_t;
typedef _simdgroup_event_t* __metal_simdgroup_event_t;

namespace metal {
namespace mtl_detail {
MTL_FN inline uint32_t async_lane() { return mtl_rt::ctx().thread_index_in_simdgroup & 31u; }
MTL_FN inline void async_move(void* dst, const void* src, ulong size) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  const unsigned char* s = static_cast<const unsigned char*>(src);
  for (ulong b = 0; b < size; b++) d[b] = s[b];
}
}  // namespace mtl_detail
}  // namespace metal

MTL_FN inline _simdgroup_event_t* __metal_simdgroup_async_copy_1d(metal::ulong size, metal::ulong, void* dst,
                                                                const void* src, metal::ulong n) {
  for (metal::ulong i = metal::mtl_detail::async_lane(); i < n; i += 32)
    metal::mtl_detail::async_move(static_cast<unsigned char*>(dst) + i * size,
                                  static_cast<const unsigned char*>(src) + i * size, size);
  return nullptr;
}

MTL_FN inline _simdgroup_event_t* __metal_simdgroup_async_copy_2d(metal::ulong size, metal::ulong, void* dst,
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

MTL_FN inline void __metal_wait_simdgroup_events(int, _simdgroup_event_t**) { metal::simdgroup_barrier(metal::mem_flags::mem_threadgroup); }
