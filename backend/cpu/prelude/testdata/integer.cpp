// integer.cpp — reads "function type a b c d" lines and prints the result
// of the Metal integer function as the unsigned bit pattern of its type.
#include <cstdio>
#include <cstring>
#include <metal_stdlib>
using namespace metal;

template <class R>
unsigned long long bits(R r) {
  return (unsigned long long)(typename std::make_unsigned<R>::type)(r);
}

template <class T>
unsigned long long run(const char* f, unsigned long long a, unsigned long long b, unsigned long long c,
                       unsigned long long d) {
  // No C++ library header here declares ::abs, as in a translated kernel.
  struct { const char* s; bool operator==(const char* o) const { return !std::strcmp(s, o); } } fn{f};
  T x = T(a), y = T(b), z = T(c);
  if (fn == "popcount") return bits(popcount(x));
  if (fn == "clz") return bits(clz(x));
  if (fn == "ctz") return bits(ctz(x));
  if (fn == "reverse_bits") return bits(reverse_bits(x));
  if (fn == "rotate") return bits(rotate(x, y));
  if (fn == "extract_bits") return bits(extract_bits(x, uint(c), uint(d)));
  if (fn == "insert_bits") return bits(insert_bits(x, y, uint(c), uint(d)));
  if (fn == "mulhi") return bits(mulhi(x, y));
  if (fn == "abs_diff") return bits(abs_diff(x, y));
  if (fn == "add_sat") return bits(add_sat(x, y));
  if (fn == "sub_sat") return bits(sub_sat(x, y));
  if (fn == "hadd") return bits(hadd(x, y));
  if (fn == "rhadd") return bits(rhadd(x, y));
  if (fn == "abs") return bits(abs(x));
  if (fn == "min") return bits(min(x, y));
  if (fn == "max") return bits(max(x, y));
  if (fn == "clamp") return bits(clamp(x, y, z));
  // The vector forms must agree with the scalar ones in every lane.
  if (fn == "vec") {
    vec<T, 2> v(x, y), w(y, z);
    vec<T, 2> p = popcount(v), r = rotate(v, w), m = mulhi(v, w), s = add_sat(v, w), cl = clamp(v, T(z), T(z + 1));
    bool ok = p[1] == popcount(y) && r[0] == rotate(x, y) && m[1] == mulhi(y, z) && s[0] == add_sat(x, y) &&
              cl[0] == clamp(x, z, T(z + 1)) && abs_diff(v, w)[1] == abs_diff(y, z) &&
              extract_bits(v, 1u, 3u)[1] == extract_bits(y, 1u, 3u) && min(v, w)[0] == min(x, y) && max(v, T(3))[1] == max(y, T(3));
    return ok;
  }
  std::fprintf(stderr, "unknown function %s\n", f);
  return 0;
}

int main() {
  char fn[32], ty[16];
  unsigned long long a, b, c, d;
  while (std::scanf("%31s %15s %llu %llu %llu %llu", fn, ty, &a, &b, &c, &d) == 6) {
    struct { const char* s; bool operator==(const char* o) const { return !std::strcmp(s, o); } } t{ty};
    unsigned long long r = 0;
    if (t == "uchar") r = run<uchar>(fn, a, b, c, d);
    else if (t == "char") r = run<signed char>(fn, a, b, c, d);
    else if (t == "ushort") r = run<ushort>(fn, a, b, c, d);
    else if (t == "short") r = run<short>(fn, a, b, c, d);
    else if (t == "uint") r = run<uint>(fn, a, b, c, d);
    else if (t == "int") r = run<int>(fn, a, b, c, d);
    else if (t == "ulong") r = run<ulong>(fn, a, b, c, d);
    else if (t == "long") r = run<long>(fn, a, b, c, d);
    std::printf("%llu\n", r);
  }
}
