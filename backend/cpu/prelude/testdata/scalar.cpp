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
    }
  }
}
