// scalar.cpp — reads commands from stdin and prints half and bfloat
// conversion and arithmetic results as bit patterns.
#include <cstdio>
#include <cstring>
#include <metal_stdlib>
#include <type_traits>
using namespace metal;

static_assert(std::is_same<decltype(half(1) + half(2)), half>::value, "half + half is half");
static_assert(std::is_same<decltype(half(1) * 2), half>::value, "half * int is half");
static_assert(std::is_same<decltype(3u - half(1)), half>::value, "uint - half is half");
static_assert(std::is_same<decltype(half(1) * 2.0f), float>::value, "half * float is float");
static_assert(std::is_same<decltype(bfloat(1) + bfloat(2)), bfloat>::value, "bfloat + bfloat is bfloat");
static_assert(std::is_same<decltype(bfloat(1) + 1.0f), float>::value, "bfloat + float is float");
static_assert(std::is_same<decltype(true ? half(1) : 0), half>::value, "c ? h : 0 is half");
static_assert(std::is_same<decltype(false ? 0u : half(1)), half>::value, "c ? 0u : h is half");
static_assert(std::is_same<decltype(true ? bfloat(1) : 0), bfloat>::value, "c ? b : 0 is bfloat");
static_assert(std::is_convertible<half, float>::value && !std::is_convertible<half, int>::value,
              "half converts implicitly to float only");
static_assert(std::is_same<decltype(1.0f - half(1)), float>::value, "float - half is float");
constexpr half kHalf = half(0.1);
static_assert(kHalf.bits == 0x2e66, "constexpr half(0.1)");
static_assert(numeric_limits<half>::max() == 65504.0f, "half max");

int main() {
  char cmd[16];
  unsigned long long a, b;
  while (std::scanf("%15s", cmd) == 1) {
    if (!std::strcmp(cmd, "f")) {  // float bits -> half bits, bfloat bits
      std::scanf("%llx", &a);
      float f = as_type<float>(uint(a));
      half h = f;
      bfloat bf = f;
      std::printf("%04x %04x\n", as_type<ushort>(h), as_type<ushort>(bf));
    } else if (!std::strcmp(cmd, "d")) {  // double bits -> half bits, bfloat bits
      std::scanf("%llx", &a);
      double d;
      std::memcpy(&d, &a, 8);
      std::printf("%04x %04x\n", half(d).bits, bfloat(d).bits);
    } else if (!std::strcmp(cmd, "h2f")) {  // half bits -> float bits
      std::scanf("%llx", &a);
      float f = half::from_bits(ushort(a));
      std::printf("%08x\n", as_type<uint>(f));
    } else if (!std::strcmp(cmd, "h")) {  // half arithmetic
      std::scanf("%llx %llx", &a, &b);
      half x = as_type<half>(ushort(a)), y = as_type<half>(ushort(b));
      half s = x;
      s += y;
      half q = x;
      q /= y;
      std::printf("%04x %04x %04x %04x %04x %04x %04x\n", (x + y).bits, (x - y).bits, (x * y).bits, (x / y).bits,
                  sqrt(x).bits, s.bits, q.bits);
    } else if (!std::strcmp(cmd, "b")) {  // bfloat arithmetic
      std::scanf("%llx %llx", &a, &b);
      bfloat x = bfloat::from_bits(ushort(a)), y = bfloat::from_bits(ushort(b));
      std::printf("%04x %04x %04x %04x\n", (x + y).bits, (x - y).bits, (x * y).bits, (x / y).bits);
    } else if (!std::strcmp(cmd, "hi")) {  // half (op) int
      long long i;
      std::scanf("%llx %lld", &a, &i);
      half x = half::from_bits(ushort(a));
      half n = half(int(i));
      std::printf("%04x %04x %04x\n", (x * int(i)).bits, (x + int(i)).bits, n.bits);
    } else if (!std::strcmp(cmd, "sel")) {  // c ? h : i and c ? i : h, then int(h), and f += h
      long long i, c;
      std::scanf("%llx %lld %lld", &a, &i, &c);
      half x = half::from_bits(ushort(a));
      half s1 = c ? x : int(i);
      half s2 = c ? int(i) : x;
      bfloat b1 = c ? bfloat(float(x)) : int(i);
      float f = 0.5f;
      f += x;
      std::printf("%04x %04x %04x %d %08x\n", s1.bits, s2.bits, b1.bits, int(x), as_type<uint>(f));
    }
  }
}
