// fiber.h — cooperative fibers for the cpu runner.
//
// A Fiber is a saved execution context. fiber_switch saves the caller's
// callee-saved registers on its own stack, records the stack pointer in
// *from and resumes *to. No system calls are made on a switch on x86-64 and
// arm64 (hand-written assembly in fiber_x86_64.S and fiber_arm64.S); other
// targets, or builds with -DMTL_FIBER_PORTABLE, use ucontext.
#pragma once
#include <cstddef>

#if !defined(MTL_FIBER_PORTABLE) && !defined(__x86_64__) && !defined(__aarch64__)
#define MTL_FIBER_PORTABLE 1
#endif

#if defined(MTL_FIBER_PORTABLE)
#include <ucontext.h>
#endif

namespace mtl_fiber {

// Fiber is one saved context.
struct Fiber {
#if defined(MTL_FIBER_PORTABLE)
  ucontext_t uc;
#else
  void* sp = nullptr;
#endif
};

// Entry is a fiber's body; it must never return (it switches away for good).
typedef void (*Entry)(void* arg);

// init prepares f to start running entry(arg) on the stack [lo, lo+size)
// the first time it is switched to.
void init(Fiber* f, void* lo, size_t size, Entry entry, void* arg);

// switch_to saves the current context in from and resumes to.
#if defined(MTL_FIBER_PORTABLE)
void switch_to(Fiber* from, Fiber* to);
#else
extern "C" void mtl_fiber_switch(void** save_sp, void* load_sp);
inline void switch_to(Fiber* from, Fiber* to) { mtl_fiber_switch(&from->sp, to->sp); }
#endif

// kind names the implementation in use, for diagnostics.
const char* kind();

}  // namespace mtl_fiber
