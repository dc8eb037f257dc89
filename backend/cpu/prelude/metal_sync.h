// metal_sync.h — memory flags and the threadgroup and simd-group barriers,
// forwarded to the runner through mtl_rt.h.
#pragma once
#include "metal_scalar.h"

namespace metal {

// mem_flags says which memory a barrier orders. The checking mode honours
// them: a barrier that does not name mem_threadgroup does not order
// threadgroup memory (Metal: mem_none makes it an execution barrier only).
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

namespace mtl_detail {
// barrier_site is where a barrier is called: the threadgroup_barrier macro
// below passes the call's line (the .metal line, through #line) so the
// runner can tell threads at different barriers apart.
struct barrier_site {
  int line;
  const char* file;
};
}  // namespace mtl_detail

// threadgroup_barrier waits for every thread of the threadgroup.
inline void threadgroup_barrier(mtl_detail::barrier_site s, mem_flags f = mem_flags::mem_none) {
  mtl_rt::threadgroup_barrier_at(s.file, s.line, unsigned(f));
}
inline void threadgroup_barrier(mem_flags f = mem_flags::mem_none) { mtl_rt::threadgroup_barrier_at(nullptr, 0, unsigned(f)); }

// simdgroup_barrier waits for every live lane of the simd group.
inline void simdgroup_barrier(mem_flags = mem_flags::mem_none) { mtl_rt::simdgroup_barrier(); }

}  // namespace metal

// Every call with arguments (Metal's threadgroup_barrier always has its
// mem_flags) names its site; qualified calls (metal::threadgroup_barrier)
// keep working because only the argument list is extended. A call without
// arguments is left as it is: that is the runtime's own
// mtl_rt::threadgroup_barrier(), which code compiled with the prelude
// precompiled but not using it calls. (__VA_OPT__, not `, ##__VA_ARGS__`:
// under -std=c++17 GCC keeps the comma before an empty __VA_ARGS__.)
#define threadgroup_barrier(...) \
  threadgroup_barrier(__VA_OPT__(::metal::mtl_detail::barrier_site{__LINE__, __FILE__}, ) __VA_ARGS__)
