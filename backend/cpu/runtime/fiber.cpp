// fiber.cpp — stack layout for new fibers and the switch entry points.
#include "fiber.h"

#include <cstdint>
#include <cstring>

#if !defined(MTL_FIBER_PORTABLE)
extern "C" void mtl_fiber_start();
#endif

namespace mtl_fiber {

#if defined(MTL_FIBER_PORTABLE)

namespace {
// trampoline receives the entry and argument split into 32-bit halves, the
// only portable way to pass pointers through makecontext.
void trampoline(unsigned e_hi, unsigned e_lo, unsigned a_hi, unsigned a_lo) {
  uintptr_t e = (uintptr_t(e_hi) << 16 << 16) | uintptr_t(e_lo);
  uintptr_t a = (uintptr_t(a_hi) << 16 << 16) | uintptr_t(a_lo);
  reinterpret_cast<Entry>(e)(reinterpret_cast<void*>(a));
  __builtin_trap();
}
}  // namespace

void init(Fiber* f, void* lo, size_t size, Entry entry, void* arg) {
  getcontext(&f->uc);
  f->uc.uc_stack.ss_sp = lo;
  f->uc.uc_stack.ss_size = size;
  f->uc.uc_link = nullptr;
  uintptr_t e = reinterpret_cast<uintptr_t>(entry);
  uintptr_t a = reinterpret_cast<uintptr_t>(arg);
  makecontext(&f->uc, reinterpret_cast<void (*)()>(trampoline), 4,
              unsigned(e >> 16 >> 16), unsigned(e & 0xffffffffu),
              unsigned(a >> 16 >> 16), unsigned(a & 0xffffffffu));
}

void switch_to(Fiber* from, Fiber* to) { swapcontext(&from->uc, &to->uc); }

const char* kind() { return "ucontext"; }

#elif defined(__x86_64__)

void init(Fiber* f, void* lo, size_t size, Entry entry, void* arg) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(lo) + size) & ~uintptr_t(15);
  uint64_t* sp = reinterpret_cast<uint64_t*>(top - 64);
  uint32_t mxcsr;
  uint16_t fpucw;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  __asm__ volatile("fnstcw %0" : "=m"(fpucw));
  uint64_t ctl = uint64_t(mxcsr) | (uint64_t(fpucw) << 32);
  sp[0] = ctl;                                           // mxcsr, x87 cw
  sp[1] = 0;                                             // r15
  sp[2] = 0;                                             // r14
  sp[3] = reinterpret_cast<uint64_t>(entry);             // r13
  sp[4] = reinterpret_cast<uint64_t>(arg);               // r12
  sp[5] = 0;                                             // rbx
  sp[6] = 0;                                             // rbp
  sp[7] = reinterpret_cast<uint64_t>(&mtl_fiber_start);  // return address
  f->sp = sp;
}

const char* kind() { return "x86-64 assembly"; }

#elif defined(__aarch64__)

void init(Fiber* f, void* lo, size_t size, Entry entry, void* arg) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(lo) + size) & ~uintptr_t(15);
  uint64_t* sp = reinterpret_cast<uint64_t*>(top - 176);
  std::memset(sp, 0, 176);
  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  sp[0] = reinterpret_cast<uint64_t>(arg);                // x19
  sp[1] = reinterpret_cast<uint64_t>(entry);              // x20
  sp[11] = reinterpret_cast<uint64_t>(&mtl_fiber_start);  // x30
  sp[20] = fpcr;
  f->sp = sp;
}

const char* kind() { return "arm64 assembly"; }

#endif

}  // namespace mtl_fiber
