// fibertest.cpp — checks the fiber context switch in isolation: callee-saved
// integer and floating-point registers survive switches, each fiber keeps
// its own floating-point rounding mode, and fiber stacks are aligned as the
// ABI requires. Prints "ok" and exits 0, or says what broke and exits 1.
#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fiber.h"

namespace {

constexpr int kFibers = 16;
constexpr int kRounds = 2000;
constexpr size_t kStack = 64 * 1024;

mtl_fiber::Fiber g_main;
mtl_fiber::Fiber g_fibers[kFibers];
int g_failures = 0;
uint64_t g_sum[kFibers];

void fail(int id, const char* what) {
  std::fprintf(stderr, "fiber %d: %s\n", id, what);
  g_failures++;
}

__attribute__((noinline)) void yield(int id) { mtl_fiber::switch_to(&g_fibers[id], &g_main); }

__attribute__((noinline)) bool aligned_frame() {
  alignas(16) volatile char probe[16];
  probe[0] = 1;
  return (reinterpret_cast<uintptr_t>(&probe[0]) & 15) == 0;
}

void body(void* arg) {
  int id = int(reinterpret_cast<intptr_t>(arg));
  if (!aligned_frame()) fail(id, "misaligned stack frame");
  // Odd fibers round upward; the rest keep round-to-nearest.
  if (id % 2 == 1) std::fesetround(FE_UPWARD);
  // Many live values across each switch: the compiler keeps them in
  // callee-saved registers.
  uint64_t a = uint64_t(id) * 3 + 1, b = uint64_t(id) * 5 + 2, c = uint64_t(id) * 7 + 3;
  uint64_t d = uint64_t(id) * 11 + 4, e = uint64_t(id) * 13 + 5, f = uint64_t(id) * 17 + 6;
  double x = id + 0.25, y = id * 2 + 0.5, z = id * 3 + 0.75, u = id * 4 + 1.0;
  volatile double one = 1.0, three = 3.0;
  for (int r = 0; r < kRounds; r++) {
    a += b ^ r;
    b += c;
    c += d;
    d += e;
    e += f;
    f += a;
    x += 1.0;
    y += 2.0;
    z += 3.0;
    u += 4.0;
    yield(id);
    double third = one / three;
    bool up = third > 0.3333333333333333;  // rounded upward only in odd fibers
    if (up != (id % 2 == 1)) {
      fail(id, "rounding mode leaked between fibers");
      break;
    }
  }
  double wx = id + 0.25 + kRounds * 1.0, wy = id * 2 + 0.5 + kRounds * 2.0;
  double wz = id * 3 + 0.75 + kRounds * 3.0, wu = id * 4 + 1.0 + kRounds * 4.0;
  if (x != wx || y != wy || z != wz || u != wu) fail(id, "floating-point register clobbered");
  g_sum[id] = a ^ b ^ c ^ d ^ e ^ f;
  mtl_fiber::switch_to(&g_fibers[id], &g_main);
  std::abort();
}

// expected recomputes a fiber's integer result without switching.
uint64_t expected(int id) {
  uint64_t a = uint64_t(id) * 3 + 1, b = uint64_t(id) * 5 + 2, c = uint64_t(id) * 7 + 3;
  uint64_t d = uint64_t(id) * 11 + 4, e = uint64_t(id) * 13 + 5, f = uint64_t(id) * 17 + 6;
  for (int r = 0; r < kRounds; r++) {
    a += b ^ r;
    b += c;
    c += d;
    d += e;
    e += f;
    f += a;
  }
  return a ^ b ^ c ^ d ^ e ^ f;
}

}  // namespace

int main() {
  std::vector<std::vector<char>> stacks(kFibers, std::vector<char>(kStack));
  for (int i = 0; i < kFibers; i++) {
    // Odd sizes and offsets: init must align the stack top itself.
    mtl_fiber::init(&g_fibers[i], stacks[size_t(i)].data() + (i % 3), kStack - 64 - size_t(i) * 8,
                    body, reinterpret_cast<void*>(intptr_t(i)));
  }
  for (int r = 0; r <= kRounds; r++) {
    for (int i = 0; i < kFibers; i++) mtl_fiber::switch_to(&g_main, &g_fibers[i]);
    volatile double one = 1.0, three = 3.0;
    if (one / three > 0.3333333333333333) {
      std::fprintf(stderr, "main: rounding mode leaked from a fiber\n");
      return 1;
    }
  }
  for (int i = 0; i < kFibers; i++) {
    if (g_sum[i] != expected(i)) fail(i, "integer register clobbered");
  }
  if (g_failures) return 1;
  std::printf("ok %s\n", mtl_fiber::kind());
  return 0;
}
