// metal_sync.h — memory flags and the threadgroup and simd-group barriers,
// forwarded to the runner through mtl_rt.h.
#pragma once
#include "metal_scalar.h"

namespace metal {

// mem_flags says which memory a barrier orders. Every thread of a
// threadgroup runs on one OS thread here, so all flags order everything.
enum class mem_flags : unsigned {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(unsigned(a) | unsigned(b)); }
constexpr mem_flags operator&(mem_flags a, mem_flags b) { return mem_flags(unsigned(a) & unsigned(b)); }

// threadgroup_barrier waits for every thread of the threadgroup.
inline void threadgroup_barrier(mem_flags = mem_flags::mem_none) { mtl_rt::threadgroup_barrier(); }

// simdgroup_barrier waits for every live lane of the simd group.
inline void simdgroup_barrier(mem_flags = mem_flags::mem_none) { mtl_rt::simdgroup_barrier(); }

}  // namespace metal
