// atomic.cpp — argv: threads iterations. Every thread hammers shared
// atomics (living in a plain uint buffer, as device memory does); the final
// values are printed.
#include <cstdio>
#include <cstdlib>
#include <metal_stdlib>

#include "stub_rt.h"
using namespace metal;

alignas(16) static uint buffer[16];

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int threads = std::atoi(argv[1]), iters = std::atoi(argv[2]);
  buffer[3] = 1000;
  buffer[6] = 1000000;
  atomic_int* ai = reinterpret_cast<atomic_int*>(&buffer[0]);
  atomic_float* af = reinterpret_cast<atomic_float*>(&buffer[1]);
  atomic_uint* amax = reinterpret_cast<atomic_uint*>(&buffer[2]);
  atomic_int* amin = reinterpret_cast<atomic_int*>(&buffer[3]);
  atomic_uint* aor = reinterpret_cast<atomic_uint*>(&buffer[4]);
  atomic_uint* cas = reinterpret_cast<atomic_uint*>(&buffer[5]);
  atomic_int* asub = reinterpret_cast<atomic_int*>(&buffer[6]);
  atomic_uint* axor = reinterpret_cast<atomic_uint*>(&buffer[7]);
  volatile atomic_uint* aexch = reinterpret_cast<atomic_uint*>(&buffer[8]);
  mtl_test::run_threads(threads, [&] {
    uint tid = mtl_rt::ctx().thread_index_in_threadgroup;
    for (int i = 0; i < iters; i++) {
      atomic_fetch_add_explicit(ai, 1, memory_order_relaxed);
      atomic_fetch_add_explicit(af, 0.5f, memory_order_relaxed);
      atomic_fetch_sub_explicit(asub, 2, memory_order_relaxed);
      uint expected = atomic_load_explicit(cas, memory_order_relaxed);
      while (!atomic_compare_exchange_weak_explicit(cas, &expected, expected + 1, memory_order_relaxed, memory_order_relaxed)) {
      }
    }
    atomic_fetch_max_explicit(amax, tid, memory_order_relaxed);
    atomic_fetch_min_explicit(amin, int(tid) - 7, memory_order_relaxed);
    atomic_fetch_or_explicit(aor, 1u << (tid % 32), memory_order_relaxed);
    atomic_fetch_xor_explicit(axor, tid * 2654435761u, memory_order_relaxed);
    atomic_exchange_explicit(aexch, 42u, memory_order_relaxed);
  });
  std::printf("%d %g %u %d %x %u %d %x %u\n", atomic_load_explicit(ai, memory_order_relaxed),
              atomic_load_explicit(af, memory_order_relaxed), atomic_load_explicit(amax, memory_order_relaxed),
              atomic_load_explicit(amin, memory_order_relaxed), atomic_load_explicit(aor, memory_order_relaxed),
              atomic_load_explicit(cas, memory_order_relaxed), atomic_load_explicit(asub, memory_order_relaxed),
              atomic_load_explicit(axor, memory_order_relaxed), atomic_load_explicit(aexch, memory_order_relaxed));
}
