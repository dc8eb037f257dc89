package prelude

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

func TestVectorLayout(t *testing.T) {
	elems := []struct {
		name string
		size int
	}{{"float", 4}, {"half", 2}, {"bfloat", 2}, {"int", 4}, {"uint", 4}, {"short", 2}, {"ushort", 2},
		{"char", 1}, {"uchar", 1}, {"bool", 1}, {"long", 8}, {"ulong", 8}}
	var src strings.Builder
	src.WriteString("#include <cstdio>\n#include <metal_stdlib>\nusing namespace metal;\nint main() {\n")
	var want []string
	for _, e := range elems {
		for n := 2; n <= 4; n++ {
			for _, packed := range []bool{false, true} {
				name := fmt.Sprintf("%s%d", e.name, n)
				size, align := e.size*n, e.size*n
				if n == 3 {
					size, align = e.size*4, e.size*4
				}
				if packed {
					name = "packed_" + name
					size, align = e.size*n, e.size
				}
				fmt.Fprintf(&src, "  std::printf(\"%s %%zu %%zu\\n\", sizeof(%s), alignof(%s));\n", name, name, name)
				want = append(want, fmt.Sprintf("%s %d %d", name, size, align))
			}
		}
	}
	src.WriteString("}\n")
	got := lines(buildRun(t, src.String(), ""))
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %q, want %q (Metal layout)", got[i], want[i])
		}
	}
}

// swizzleOp is one step of the swizzle test: C++ to run and the effect on
// the model vector.
type swizzleOp struct {
	cxx   string
	apply func(v []float64) []float64 // returns the values printed after the step
}

func randSwizzle(r *rand.Rand, n int, distinct bool) []int {
	length := 2 + r.Intn(3)
	if distinct && length > n {
		length = n
	}
	perm := r.Perm(n)
	idx := make([]int, length)
	for i := range idx {
		if distinct {
			idx[i] = perm[i]
		} else {
			idx[i] = r.Intn(n)
		}
	}
	return idx
}

func swizzleName(idx []int) string {
	var b strings.Builder
	for _, i := range idx {
		b.WriteByte("xyzw"[i])
	}
	return b.String()
}

func TestSwizzleReadWrite(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	v := []float64{1, 2, 3, 4}
	var ops []swizzleOp
	vecLit := func(vals []float64) string {
		s := make([]string, len(vals))
		for i, x := range vals {
			s[i] = fmt.Sprint(x)
		}
		return fmt.Sprintf("float%d(%s)", len(vals), strings.Join(s, ", "))
	}
	for i := 0; i < 300; i++ {
		switch i % 5 {
		case 0: // read, repeats allowed
			idx := randSwizzle(r, 4, false)
			ops = append(ops, swizzleOp{"print(v." + swizzleName(idx) + "());", func(v []float64) []float64 {
				out := make([]float64, len(idx))
				for k, c := range idx {
					out[k] = v[c]
				}
				return out
			}})
		case 1: // assign
			idx := randSwizzle(r, 4, true)
			vals := make([]float64, len(idx))
			for k := range vals {
				vals[k] = float64(r.Intn(100))
			}
			ops = append(ops, swizzleOp{"v." + swizzleName(idx) + "() = " + vecLit(vals) + "; print(v);", func(v []float64) []float64 {
				for k, c := range idx {
					v[c] = vals[k]
				}
				return v
			}})
		case 2: // compound with a vector, then with a scalar
			idx := randSwizzle(r, 4, true)
			vals := make([]float64, len(idx))
			for k := range vals {
				vals[k] = float64(r.Intn(10))
			}
			ops = append(ops, swizzleOp{"v." + swizzleName(idx) + "() += " + vecLit(vals) + "; v." + swizzleName(idx) + "() *= 2; print(v);", func(v []float64) []float64 {
				for k, c := range idx {
					v[c] = (v[c] + vals[k]) * 2
				}
				return v
			}})
		case 3: // swizzle to swizzle of the same vector: the right side is read first
			a := randSwizzle(r, 4, true)
			b := randSwizzle(r, 4, false)[:1]
			for len(b) < len(a) {
				b = append(b, r.Intn(4))
			}
			ops = append(ops, swizzleOp{"v." + swizzleName(a) + "() = v." + swizzleName(b) + "(); print(v);", func(v []float64) []float64 {
				rhs := make([]float64, len(b))
				for k, c := range b {
					rhs[k] = v[c]
				}
				for k, c := range a {
					v[c] = rhs[k]
				}
				return v
			}})
		case 4: // a named copy is a value and never writes back
			idx := randSwizzle(r, 4, true)
			ops = append(ops, swizzleOp{"{ auto p = v." + swizzleName(idx) + "(); p = 0.0f; p += 1.0f; print(p); } print(v);", func(v []float64) []float64 {
				out := make([]float64, len(idx))
				for k := range out {
					out[k] = 1
				}
				return append(out, v...)
			}})
		}
	}
	var src strings.Builder
	src.WriteString(`#include <cstdio>
#include <metal_stdlib>
using namespace metal;
template <int N> void print(vec<float, N> v) { for (int i = 0; i < N; i++) std::printf("%g ", v[i]); }
int main() {
  float4 v = float4(1, 2, 3, 4);
`)
	for _, op := range ops {
		src.WriteString("  " + op.cxx + ` std::printf("\n");` + "\n")
	}
	src.WriteString("}\n")
	got := lines(buildRun(t, src.String(), ""))
	if len(got) != len(ops) {
		t.Fatalf("got %d lines, want %d", len(got), len(ops))
	}
	for i, op := range ops {
		var want strings.Builder
		for _, x := range op.apply(v) {
			fmt.Fprintf(&want, "%g ", x)
		}
		if strings.TrimSpace(got[i]) != strings.TrimSpace(want.String()) {
			t.Fatalf("step %d %s: got %q, want %q", i, op.cxx, got[i], want.String())
		}
	}
}

// trunc32 converts like C++ float to int: toward zero.
func trunc32(x float32) int { return int(x) }

func TestVectorOperators(t *testing.T) {
	src := `#include <cstdio>
#include <metal_stdlib>
using namespace metal;
template <class T, int N> void pr(const char* name, vec<T, N> v) {
  std::printf("%s", name);
  for (int i = 0; i < N; i++) std::printf(" %lld", (long long)v[i]);
  std::printf("\n");
}
int main(int argc, char**) {
  uint4 u = uint4(0, 1, 0xffffffffu, 7) + uint(argc - 1);
  pr("usub", u - 1u);
  pr("umul", u * 0x80000001u);
  pr("ushl", u << uint4(1, 31, 4, 0));
  pr("ushr", u >> 1u);
  pr("unot", ~u);
  int4 i = int4(-7, 7, -8, 9);
  pr("imod", i % 3);
  pr("idiv", i / int4(2, -2, 3, 4));
  pr("iand", i & 6);
  pr("ixor", 5 ^ i);
  pr("ineg", -i);
  pr("icmp", i < 0);
  pr("ieq", i == int4(-7, 0, -8, 0));
  pr("inot", !int4(0, 1, 0, 2));
  float4 f = float4(1.7f, -1.7f, 2.5f, -2.5f);
  pr("conv", int4(f));
  pr("mixed", int4(float4(f.xy(), 5, 6)));
  pr("from3", int4(float4(float3(1, 2, 3), 4)));
  pr("splat", int3(9));
  packed_float3 p = float3(1, 2, 3);
  float3 q = p;
  q += p;
  pr("packed", int3(q + p));
  pr("select", select(int4(1, 2, 3, 4), int4(5, 6, 7, 8), bool4(true, false, true, false)));
  std::printf("allany %d %d %d %d\n", all(bool2(true, false)), any(bool2(true, false)), all(int3(1, 2, 3) > 0), any(int2(1, 2) > 5));
  uchar2 c = uchar2(250, 3) + uchar(10);
  pr("uchar", c);
  short2 s = short2(32767, -32768) + short(1);
  pr("short", s);
  pr("idx", int4(u[0], u[1], u[2], u[3]));
  std::printf("astype %x %llx %x %x\n", as_type<uint>(1.0f), (unsigned long long)as_type<ulong>(float2(1.0f, -2.0f)),
              as_type<uint>(half2(half(1.0), half(-2.0))), as_type<ushort>(half(0.5)));
  float2 back = as_type<float2>(as_type<ulong>(float2(3.5f, -0.25f)));
  std::printf("roundtrip %g %g\n", back.x, back.y);
  half4 a = half4(0.1f, 0.2f, 1000.0f, 3.0f), b = half4(0.3f, 0.7f, 0.001f, 1.0f / 3.0f);
  half4 r = a * b + a;
  std::printf("half4 %04x %04x %04x %04x %04x %04x %04x %04x\n", a.x.bits, a.y.bits, a.z.bits, a.w.bits, b.x.bits, b.y.bits, b.z.bits, b.w.bits);
  std::printf("hres %04x %04x %04x %04x\n", r.x.bits, r.y.bits, r.z.bits, r.w.bits);
}
`
	got := lines(buildRun(t, src, ""))
	u := []uint32{0, 1, 0xffffffff, 7}
	um := func(f func(x uint32, k int) uint32) string {
		s := ""
		for k, x := range u {
			s += fmt.Sprintf(" %d", f(x, k))
		}
		return s
	}
	shl := []uint32{1, 31, 4, 0}
	want := []string{
		"usub" + um(func(x uint32, _ int) uint32 { return x - 1 }),
		"umul" + um(func(x uint32, _ int) uint32 { return x * 0x80000001 }),
		"ushl" + um(func(x uint32, k int) uint32 { return x << shl[k] }),
		"ushr" + um(func(x uint32, _ int) uint32 { return x >> 1 }),
		"unot" + um(func(x uint32, _ int) uint32 { return ^x }),
		fmt.Sprintf("imod %d %d %d %d", -7%3, 7%3, -8%3, 9%3),
		fmt.Sprintf("idiv %d %d %d %d", -7/2, 7/-2, -8/3, 9/4),
		fmt.Sprintf("iand %d %d %d %d", -7&6, 7&6, -8&6, 9&6),
		fmt.Sprintf("ixor %d %d %d %d", 5^-7, 5^7, 5^-8, 5^9),
		"ineg 7 -7 8 -9",
		"icmp 1 0 1 0",
		"ieq 1 0 1 0",
		"inot 1 0 1 0",
		fmt.Sprintf("conv %d %d %d %d", trunc32(1.7), trunc32(-1.7), trunc32(2.5), trunc32(-2.5)),
		fmt.Sprintf("mixed %d %d 5 6", trunc32(1.7), trunc32(-1.7)),
		"from3 1 2 3 4",
		"splat 9 9 9",
		"packed 3 6 9",
		"select 5 2 7 4",
		"allany 0 1 1 0",
		fmt.Sprintf("uchar %d %d", (250+10)%256, 13),
		fmt.Sprintf("short %d %d", int16(math.MinInt16), -32767),
		"idx 0 1 -1 7",
		fmt.Sprintf("astype %x %x %x %x", math.Float32bits(1), uint64(math.Float32bits(-2))<<32|uint64(math.Float32bits(1)),
			uint32(refHalf(-2))<<16|uint32(refHalf(1)), refHalf(0.5)),
		"roundtrip 3.5 -0.25",
	}
	if len(got) != len(want)+2 {
		t.Fatalf("got %d lines:\n%s", len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %q, want %q", got[i], want[i])
		}
	}
	// half4 arithmetic: the inputs round from float, then a*b and +a each
	// round to binary16.
	var hb [8]uint16
	fmt.Sscanf(got[len(want)], "half4 %x %x %x %x %x %x %x %x", &hb[0], &hb[1], &hb[2], &hb[3], &hb[4], &hb[5], &hb[6], &hb[7])
	in := []float32{0.1, 0.2, 1000, 3, 0.3, 0.7, 0.001, 1.0 / 3}
	for k := range hb {
		if w := refHalf(float64(in[k])); hb[k] != w {
			t.Errorf("half4 input %d = %04x, want %04x", k, hb[k], w)
		}
	}
	var res [4]uint16
	fmt.Sscanf(got[len(want)+1], "hres %x %x %x %x", &res[0], &res[1], &res[2], &res[3])
	for k := 0; k < 4; k++ {
		a, b := halfValue(hb[k]), halfValue(hb[k+4])
		if w := refHalf(halfValue(refHalf(a*b)) + a); res[k] != w {
			t.Errorf("half4 a*b+a lane %d = %04x, want %04x", k, res[k], w)
		}
	}
}

// TestBracedVectorInit checks Clang's vector initializer lists: the listed
// scalars lead and the components left out are zero (a single scalar in
// braces too, which a cast or an assignment would splat); a list holding
// vectors, and a copy in braces, keep the constructors' meaning.
func TestBracedVectorInit(t *testing.T) {
	src := `#include <cstdio>
#include <metal_stdlib>
using namespace metal;
template <class T, int N> void pr(const char* name, vec<T, N> v) {
  std::printf("%s", name);
  for (int i = 0; i < N; i++) std::printf(" %lld", (long long)v[i]);
  std::printf("\n");
}
struct S { uint4 a; int2 b; };
uint4 ret(uint x) { return {x, x + 1}; }
constexpr int3 k3 = {13, 19};
int main(int argc, char**) {
  uint a = uint(argc) + 4, b = 9;
  uint4 ks = {a, b, a ^ b ^ 0x1BD11BDAu};
  pr("three", ks);
  int4 one = {int(a)};
  pr("one", one);
  float4 f = {2.5f};
  pr("onef", int4(f * 2.0f));
  pr("splat", int4(float4(2.5f) * 2.0f));
  float4 g = 2.5f;
  pr("assign", int4(g));
  pr("ret", ret(a));
  pr("const", k3);
  S s = {{1, 2}, {3}};
  pr("member.a", s.a);
  pr("member.b", s.b);
  uint4 arr[2] = {{5}, {6, 7, 8, 9}};
  pr("arr0", arr[0]);
  pr("arr1", arr[1]);
  half4 h = {half(1.5f), 2.0f};
  pr("half", int4(h * half(2.0f)));
  bool3 t = {true};
  pr("bool", t);
  float2 xy = float2(3, 4);
  float4 mixed = {xy, 5.0f, 6.0f};
  pr("mixed", int4(mixed));
  float4 full = {1, 2, 3, 4};
  float4 copy = {full};
  pr("copy", int4(copy));
  float2 sw = {full.zw()};
  pr("swizzle", int2(sw));
  uint4 zero = {};
  pr("empty", zero);
  packed_float3 p = {7.0f};
  pr("packed", int3(float3(p)));
}
`
	got := lines(buildRun(t, src, ""))
	want := []string{
		fmt.Sprintf("three 5 9 %d 0", 5^9^0x1BD11BDA),
		"one 5 0 0 0",
		"onef 5 0 0 0",
		"splat 5 5 5 5",
		"assign 2 2 2 2",
		"ret 5 6 0 0",
		"const 13 19 0",
		"member.a 1 2 0 0",
		"member.b 3 0",
		"arr0 5 0 0 0",
		"arr1 6 7 8 9",
		"half 3 4 0 0",
		"bool 1 0 0",
		"mixed 3 4 5 6",
		"copy 1 2 3 4",
		"swizzle 3 4",
		"empty 0 0 0 0",
		"packed 7 0 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
