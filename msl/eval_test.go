package msl

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"metalab/internal/testenv"
)

const evalSrc = `
#define N 64
#define M (N / 2)
#define SELF SELF
#define LOOP_A LOOP_B
#define LOOP_B LOOP_A
#define F(x) (x)
#define FLAG
constant int K = N * 2;
constexpr constant int C2 = K + 1;
static const int S3 = 3;
constant float FF = 1.5f;
constant bool FC [[function_constant(0)]];
constant int V = 7;
enum Color { Red, Green = 4, Blue };
enum class Mode : int { A = 1 << 3, B };
struct P { float3 a; half h; };
kernel void k(uint n) {
    const int L = 16;
    int var = 3;
    constexpr int W = L * 2;
    const int V = 9;
}
`

func TestEval(t *testing.T) {
	f, err := Parse("e.metal", []byte(evalSrc))
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{File: f, Func: f.Func("k"), Defines: map[string]string{"D": "5", "N2": "N*2"}, TemplateArgs: map[string]string{"T": "float", "BS": "8"}}
	tests := []struct {
		expr string
		want int64
		ok   bool
	}{
		{"1 + 2 * 3", 7, true},
		{"10 - 3 - 2", 5, true},
		{"100 / 10 / 5 * 3 % 4", 2, true},
		{"1 | 2 ^ 3 & 6", 1, true},
		{"1 + 2 << 3 == 24 && 7 - 2 * 3 > 0 || 0", 1, true},
		{"2 * 3 + 4 * 5 - 6 / 2", 23, true},
		{"(1 + 2) * 3", 9, true},
		{"10 / 3", 3, true},
		{"10 % 3", 1, true},
		{"-7 / 2", -3, true},
		{"1 << 10", 1024, true},
		{"-16 >> 2", -4, true},
		{"0xF0 & 0x3C", 0x30, true},
		{"0xF0 | 0x0F", 0xFF, true},
		{"5 ^ 3", 6, true},
		{"~0", -1, true},
		{"!0 + !5", 1, true},
		{"3 < 4 && 4 <= 4 && 5 > 4 && 5 >= 6", 0, true},
		{"1 == 1 || x", 1, true},
		{"0 && x", 0, true},
		{"x && 0", 0, true},
		{"1 ? 2 : 3", 2, true},
		{"0 ? 2 : 1 ? 4 : 5", 4, true},
		{"2 != 2", 0, true},
		{"0x1Fu + 10UL + 0b101 + 017 + 1'000", 31 + 10 + 5 + 15 + 1000, true},
		{"'a'", 97, true},
		{"(int)3 + uint(4) + (unsigned int)(5) + static_cast<int>(6) + metal::uint(1)", 19, true},
		{"N", 64, true},
		{"M", 32, true},
		{"K", 128, true},
		{"C2", 129, true},
		{"S3", 3, true},
		{"D + N2", 5 + 128, true},
		{"L", 16, true},
		{"W", 32, true},
		{"V", 9, true},
		{"Green + Blue", 9, true},
		{"Mode::B", 9, true},
		{"Red", 0, true},
		{"true + false", 1, true},
		{"sizeof(float4)", 16, true},
		{"sizeof(half3)", 8, true},
		{"sizeof(packed_float3)", 12, true},
		{"sizeof(P)", 32, true},
		{"sizeof(T) * BS", 32, true},
		{"BS", 8, true},
		// Never guess.
		{"var", 0, false},
		{"n", 0, false},
		{"FF", 0, false},
		{"1.5", 0, false},
		{"FC", 0, false},
		{"F(3)", 0, false},
		{"SELF", 0, false},
		{"LOOP_A", 0, false},
		{"unknown", 0, false},
		{"1 / 0", 0, false},
		{"1 % 0", 0, false},
		{"1 << 64", 0, false},
		{"1 +", 0, false},
		{"(1", 0, false},
		{"1 2", 0, false},
		{"", 0, false},
		{"0xFFFFFFFFFFFFFFFFF", 0, false},
		{"sizeof(simdgroup_float8x8)", 0, false},
		{"foo(1)", 0, false},
		{"FLAG", 0, false},
	}
	for _, tt := range tests {
		got, ok := env.Eval(tt.expr)
		if ok != tt.ok || got != tt.want {
			t.Errorf("Eval(%q) = %d, %v; want %d, %v", tt.expr, got, ok, tt.want, tt.ok)
		}
	}
}

// TestEvalScope checks that -D defines win over the file's, and that At
// hides later locals.
func TestEvalScope(t *testing.T) {
	f, err := Parse("e.metal", []byte(evalSrc))
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{File: f, Defines: map[string]string{"N": "8"}}
	if v, ok := env.Eval("M"); !ok || v != 4 {
		t.Errorf("Eval(M) with -DN=8 = %d, %v; want 4, true", v, ok)
	}
	k := f.Func("k")
	var wPos int
	Walk(k.Body, func(s Stmt) bool {
		if d, ok := s.(*Decl); ok && d.Names[0].Name == "W" {
			wPos = d.Pos
		}
		return true
	})
	before := &Env{File: f, Func: k, At: wPos}
	if _, ok := before.Eval("W"); ok {
		t.Errorf("Eval(W) before its declaration succeeded")
	}
	if v, ok := before.Eval("L"); !ok || v != 16 {
		t.Errorf("Eval(L) = %d, %v; want 16, true", v, ok)
	}
	global := &Env{File: f}
	if v, ok := global.Eval("V"); !ok || v != 7 {
		t.Errorf("Eval(V) at file scope = %d, %v; want 7, true", v, ok)
	}
}

func TestLayout(t *testing.T) {
	src := `
struct A { char c; float f; };
struct B { half2 h; float3 v; char tail; };
struct C { packed_float3 p; float x[3]; A a[2]; };
struct D { static constexpr int K = 4; int k; };
union U { float4 v; char c[20]; };
struct alignas(16) E { float x; };
struct alignas(float4) F { half h; };
struct alignas(Q) H { half h; };
template <typename T> struct G { T x; };
typedef float4 vec_t;
using idx_t = ushort;
`
	f, err := Parse("l.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{File: f, TemplateArgs: map[string]string{"T": "half4", "N": "3"}}
	tests := []struct {
		typ         string
		size, align int64
		ok          bool
	}{
		{"bool", 1, 1, true},
		{"char", 1, 1, true},
		{"uchar", 1, 1, true},
		{"short", 2, 2, true},
		{"ushort", 2, 2, true},
		{"half", 2, 2, true},
		{"bfloat", 2, 2, true},
		{"int", 4, 4, true},
		{"uint", 4, 4, true},
		{"float", 4, 4, true},
		{"long", 8, 8, true},
		{"ulong", 8, 8, true},
		{"float2", 8, 8, true},
		{"float3", 16, 16, true},
		{"float4", 16, 16, true},
		{"half2", 4, 4, true},
		{"half3", 8, 8, true},
		{"half4", 8, 8, true},
		{"char3", 4, 4, true},
		{"bool2", 2, 2, true},
		{"bfloat4", 8, 8, true},
		{"packed_float3", 12, 4, true},
		{"packed_half3", 6, 2, true},
		{"packed_float4", 16, 4, true},
		{"float4x4", 64, 16, true},
		{"half2x3", 16, 8, true},
		{"float3x2", 24, 8, true},
		{"atomic_int", 4, 4, true},
		{"atomic_uint", 4, 4, true},
		{"atomic_float", 4, 4, true},
		{"metal::atomic<uint>", 4, 4, true},
		{"const float", 4, 4, true},
		{"metal::float4", 16, 16, true},
		{"vec<float, 3>", 16, 16, true},
		{"metal::vec<half,2>", 4, 4, true},
		{"float[4]", 16, 4, true},
		{"float2[N]", 24, 8, true},
		{"array<float, 5>", 20, 4, true},
		{"T", 8, 8, true},
		{"A", 8, 4, true},
		{"B", 48, 16, true},
		{"C", 40, 4, true},
		{"D", 4, 4, true},
		{"vec_t", 16, 16, true},
		{"idx_t", 2, 2, true},
		{"float*", 8, 8, true},
		{"G", 0, 0, false},
		{"E", 16, 16, true},
		{"F", 16, 16, true},
		{"H", 0, 0, false},
		{"simdgroup_float8x8", 0, 0, false},
		{"Unknown", 0, 0, false},
		{"float5", 0, 0, false},
		{"float[M]", 0, 0, false},
	}
	for _, tt := range tests {
		size, align, ok := env.Layout(tt.typ)
		if !tt.ok {
			if ok {
				t.Errorf("Layout(%q) = %d, %d, true; want unknown", tt.typ, size, align)
			}
			continue
		}
		if !ok || size != tt.size || align != tt.align {
			t.Errorf("Layout(%q) = %d, %d, %v; want %d, %d, true", tt.typ, size, align, ok, tt.size, tt.align)
		}
	}
	// A union is as large as its largest member, rounded to its alignment.
	if size, align, ok := env.Layout("U"); !ok || size != 32 || align != 16 {
		t.Errorf("Layout(U) = %d, %d, %v; want 32, 16, true", size, align, ok)
	}
}

// TestEvalBlowup checks that constants defined in terms of several others
// fail fast instead of taking exponential time, in Eval and in #if.
func TestEvalBlowup(t *testing.T) {
	var src, defs strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&src, "constant int c%d = c%d + c%d;\n", i, i+1, i+1)
		fmt.Fprintf(&defs, "#define D%d (D%d + D%d)\n", i, i+1, i+1)
	}
	src.WriteString("constant int c40 = 1;\n")
	defs.WriteString("#define D40 1\n#if D0 > 0\nx\n#endif\n")
	start := time.Now()
	f, err := Parse("b.metal", []byte(src.String()+defs.String()))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := (&Env{File: f}).Eval("c0"); ok {
		t.Errorf("Eval(c0) = %d, true; want a bounded failure", v)
	}
	if v, ok := (&Env{File: f}).Eval("c35"); !ok || v != 32 {
		t.Errorf("Eval(c35) = %d, %v; want 32, true", v, ok)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestEvalDeep checks that expressions nested past the parser's limit are
// unknown rather than exhausting the stack, and that those within it still
// evaluate.
func TestEvalDeep(t *testing.T) {
	e := &Env{}
	tests := []struct {
		expr string
		want int64
		ok   bool
	}{
		{strings.Repeat("- ", 100) + "1", 1, true},
		{strings.Repeat("(", 80) + "2" + strings.Repeat(")", 80), 2, true},
		{strings.Repeat("- ", 100000) + "1", 0, false},
		{strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000), 0, false},
		{strings.Repeat("1 ? ", 100000) + "1" + strings.Repeat(" : 2", 100000), 0, false},
	}
	for _, tt := range tests {
		v, ok := e.Eval(tt.expr)
		if v != tt.want || ok != tt.ok {
			t.Errorf("Eval(%.20q...) = %d, %v; want %d, %v", tt.expr, v, ok, tt.want, tt.ok)
		}
	}
}

// TestIfUnsigned checks #if conditions with unsigned operands, which the
// preprocessor evaluates in uintmax_t: msl takes the branch the compiler
// takes. With a C++ compiler at hand each condition is also held to its
// preprocessor.
func TestIfUnsigned(t *testing.T) {
	tests := []struct {
		cond string
		want bool
	}{
		{"-1 > 0u", true},
		{"-1 > 0", false},
		{"-1 < 0u", false},
		{"0u - 1 > 0", true},
		{"0 - 1 > 0", false},
		{"(0u - 1) / 2 == 0x7fffffffffffffff", true},
		{"-2 / 2u == 0x7fffffffffffffff", true},
		{"-2 / 2 == -1", true},
		{"-1 >> 63 == -1", true},
		{"-1u >> 63 == 1", true},
		{"1 << 63 < 0", true},
		{"1u << 63 < 0", false},
		{"U > -1", false},
		{"U + 1 == 1", true},
		{"!0u == 1", true},
		{"(1 ? -1 : 0u) > 0", true},
		{"(0 ? 0u : -1) > 0", true},
		{"18446744073709551615 == -1", true},
		{"0xffffffffffffffff > 0", true},
		{"-1 % 3u == 0", true},
		{"(-1 < 0) > 0u", true},
		{"-1L > 0UL", true},
		{"-1 > 0LL", false},
	}
	cxx, cxxErr := testenv.CXX()
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			src := "#define U 0u\n#if " + tt.cond + "\nyes\n#else\nno\n#endif\n"
			toks, err := Lex("t.metal", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tk := range toks {
				if tk.Kind == Ident {
					got = append(got, tk.Text)
				}
			}
			want := "no"
			if tt.want {
				want = "yes"
			}
			if len(got) != 1 || got[0] != want {
				t.Errorf("#if %s: msl keeps %v, want [%s]", tt.cond, got, want)
			}
			if cxxErr != nil {
				return
			}
			cmd := testenv.Command(cxx, "-E", "-P", "-x", "c++", "-")
			cmd.Stdin = strings.NewReader(src)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s -E: %v", cxx[0], err)
			}
			if strings.TrimSpace(string(out)) != want {
				t.Errorf("#if %s: the compiler keeps %q; the table says %s", tt.cond, strings.TrimSpace(string(out)), want)
			}
		})
	}
}
