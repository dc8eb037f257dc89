// native_poly is poly from bench.metal as a plain C++ loop, compiled with the
// cpu backend's flags. Usage: native_poly N REPS < x.bin; prints the median
// nanoseconds per pass over N elements and an FNV-1a hash of the output.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__attribute__((noinline)) static void poly(const float* x, float* y, int n) {
  for (int i = 0; i < n; i++) {
    float v = x[i];
    float acc = 0.0f;
    for (int k = 0; k < 64; k++) {
      acc = acc * v + 0.5f;
      v = v * 0.999f + 0.001f;
    }
    y[i] = acc;
  }
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int n = atoi(argv[1]), reps = atoi(argv[2]);
  std::vector<float> x(n), y(n);
  if (fread(x.data(), sizeof(float), n, stdin) != size_t(n)) return 3;
  std::vector<long long> ns;
  for (int r = 0; r < reps; r++) {
    auto t0 = std::chrono::steady_clock::now();
    poly(x.data(), y.data(), n);
    auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  uint64_t h = 14695981039346656037ull;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(y.data());
  for (size_t i = 0; i < y.size() * sizeof(float); i++) h = (h ^ p[i]) * 1099511628211ull;
  printf("%lld %016llx\n", ns[ns.size() / 2], static_cast<unsigned long long>(h));
  return 0;
}
