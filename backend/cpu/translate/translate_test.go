package translate

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/internal/testenv"
	"metalab/msl"
)

// TestLexRoundTrip checks the msl lexer properties the translator relies
// on: tokens and blank trivia reproduce the source.
func TestLexRoundTrip(t *testing.T) {
	srcs := []string{
		"#include <metal_stdlib>\nusing namespace metal;\n",
		"kernel void f(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1.0h + 2.f + 0x1Fu + 1e-3f; }\n",
		"#define M(x) \\\n  ((x) + 1)\n/* c */ int a; // d\n",
		"float4 v = float4(.5f); v.xy = v.zw; s >>= 2; p->x; a::b;",
	}
	for _, src := range srcs {
		toks, err := msl.Lex("t.metal", []byte(src))
		if err != nil {
			t.Fatalf("lex(%q): %v", src, err)
		}
		var b strings.Builder
		prev := 0
		for _, tk := range toks {
			b.WriteString(src[prev:tk.Pos])
			if strings.TrimSpace(strings.ReplaceAll(src[prev:tk.Pos], "\\\n", "")) != "" {
				t.Errorf("lex(%q): non-blank trivia %q before %q", src, src[prev:tk.Pos], tk.Text)
			}
			b.WriteString(tk.Text)
			prev = tk.End
		}
		b.WriteString(src[prev:])
		if b.String() != src {
			t.Errorf("lex(%q) does not reproduce the source: %q", src, b.String())
		}
	}
}

// TestLexKinds checks that directives (with continuations) and attribute
// lists are single tokens and literals have the kinds the rewrites expect.
func TestLexKinds(t *testing.T) {
	src := "#define A 1 \\\n 2\n[[buffer(0)]] 1.0h 0x1Fu 2.f 7 x >>= \"s\" 'c' // end"
	toks, err := msl.Lex("t.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []msl.Kind{msl.Directive, msl.Attribute, msl.Float, msl.Int, msl.Float, msl.Int, msl.Ident, msl.Punct, msl.String, msl.Char, msl.Comment}
	if len(toks) != len(want) {
		t.Fatalf("got %d tokens %v, want %d", len(toks), toks, len(want))
	}
	for i, k := range want {
		if toks[i].Kind != k {
			t.Errorf("token %d %q: kind %d, want %d", i, toks[i].Text, toks[i].Kind, k)
		}
	}
	if toks[0].Text != "#define A 1 \\\n 2" {
		t.Errorf("directive = %q", toks[0].Text)
	}
}

const header = "#include <metal_stdlib>\nusing namespace metal;\n"

func TestTranslate(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		entry   string
		consts  map[string]backend.Value
		want    []string
		notWant []string
	}{
		{
			name:  "address spaces and buffers",
			src:   header + "struct P { uint n; };\nkernel void k(device const float* a [[buffer(0)]], device float* o [[buffer(1)]], constant P& p [[buffer(2)]], uint i [[thread_position_in_grid]]) { o[i] = a[i] * p.n; }\n",
			entry: "k",
			want: []string{"void k( const float* a ,  float* o , const P& p , uint i )",
				"static_cast<const float *>(mtl_b[0])", "*static_cast<const P*>(mtl_b[2])",
				"static_cast<uint>(mtl_c.thread_position_in_grid[0])", `{"k", &::mtl_run_k, 0, nullptr, 1024, 3, mtl_bufs_0}`,
				// Only the non-const device buffer is writable.
				`{0, "a", 0, 0},`, `{1, "o", 1, 0},`, `{2, "p", 0, 0},`},
			notWant: []string{"device", "[[", "kernel void"},
		},
		{
			name:  "implicit buffer order",
			src:   header + "kernel void k(device float* o, constant float* a, uint2 g [[thread_position_in_grid]], ushort l [[thread_index_in_simdgroup]]) { o[g.x] = a[l]; }\n",
			entry: "k",
			want: []string{"static_cast<float *>(mtl_b[0])", "static_cast<const float *>(mtl_b[1])",
				"uint2(static_cast<uint>(mtl_c.thread_position_in_grid[0]), static_cast<uint>(mtl_c.thread_position_in_grid[1]))",
				"static_cast<ushort>(mtl_c.thread_index_in_simdgroup)"},
		},
		{
			name:  "threadgroup param",
			src:   header + "kernel void k(device float* o [[buffer(0)]], threadgroup float* s [[threadgroup(0)]], uint w [[thread_execution_width]]) { s[0] = w; o[0] = s[0]; }\n",
			entry: "k",
			want:  []string{"static_cast<float *>(mtl_tg[0])", "static_cast<uint>(mtl_c.threads_per_simdgroup)"},
		},
		{
			name:  "threadgroup storage",
			src:   header + "float h(float x) {\n  threadgroup float t[8];\n  t[0] = x; return t[0];\n}\nkernel void k(device float* o [[buffer(0)]]) {\n  threadgroup float s[4][64] = {0}, u[2];\n  threadgroup float* p = &s[0][0];\n  o[0] = h(p[0]) + u[1];\n}\n",
			entry: "k",
			want: []string{"typedef float mtl_tg0_t[8];", "typedef float mtl_tg1_t[4][64];", "typedef float mtl_tg2_t[2];",
				"mtl_tg1_t& s = *static_cast<mtl_tg1_t*>(mtl_rt::tg_slot(1)); mtl_tg2_t& u = *static_cast<mtl_tg2_t*>(mtl_rt::tg_slot(2));",
				" float* p = &s[0][0];", "{0, sizeof(::mtl_tg0_t), alignof(::mtl_tg0_t), \"t\", sizeof(std::remove_all_extents<::mtl_tg0_t>::type), int(std::rank<::mtl_tg0_t>::value)"},
		},
		{
			name:  "swizzles and literals",
			src:   header + "struct S { float rg; };\nkernel void k(device float4* o [[buffer(0)]], constant S& s [[buffer(1)]]) { float4 v = o[0]; v.xy = v.zw; v.r = v.a; o[0].rgb = v.bgr; v.x = s.rg + 1.0h + 2h + 0.5H; }\n",
			entry: "k",
			want:  []string{"v.xy() = v.mtl_rv_zw();", "v.x = v.w;", "o[0].xyz() = v.mtl_rv_zyx();", "s.rg +", "metal::half(1.0)", "metal::half(2.0)", "metal::half(0.5)"},
		},
		{
			name: "swizzle reads are plain values, writes are proxies",
			src: header + "template <typename T> T mul(T a, T b) { return a * b; }\nfloat4 p(float4 x) { return x; }\n" +
				"kernel void k(device float4* o [[buffer(0)]]) { float4 v = o[0]; float2 w = mul(v.xy, v.zw);\n" +
				"  (v.zw) = w; v.xy += w; ++v.xy; v.zw++; --o[0].xy; o[1] = float4(v.xy.x, v.xyz[1], v.ba); w = (v.xy); w = p(v).xy; }\n",
			entry: "k",
			want: []string{"mul(v.mtl_rv_xy(), v.mtl_rv_zw());", "(v.zw()) = w;", "v.xy() += w;", "++v.xy();", "v.zw()++;", "--o[0].xy();",
				"float4(v.xy().x, v.xyz()[1], v.mtl_rv_zw())", "w = (v.mtl_rv_xy());", "w = p(v).mtl_rv_xy();"},
		},
		{
			name:  "unsuffixed float literals are float",
			src:   header + "kernel void k(device float* o [[buffer(0)]]) { o[0] = o[1] * 0.1 + 1. + 1e3 + 0x1p3 + 2.5f + 3; }\n",
			entry: "k",
			want:  []string{"o[1] * 0.1f + 1.f + 1e3f + 0x1p3f + 2.5f + 3;"},
		},
		{
			name:   "function constants",
			src:    header + "constant bool has_b [[function_constant(0)]];\nconstant float scale [[function_constant(1)]];\nconstant half hv [[function_constant(2)]];\nconstant int count [[function_constant(3)]];\nconstexpr constant int N = 4;\nkernel void k(device float* o [[buffer(0)]]) { if (is_function_constant_defined(scale)) o[0] = scale * N; if (is_function_constant_defined(has_b)) o[1] = count; o[2] = hv; }\n",
			entry:  "k",
			consts: map[string]backend.Value{"scale": {Type: "float", Bits: 0x40400000}, "hv": {Type: "half", Bits: 0x3c00}, "count": {Type: "int", Bits: 0xfffffffe}},
			want: []string{"static const bool has_b = static_cast<bool>(bool());", "static const float scale = static_cast<float>(0x1.8p+01);",
				"static const half hv = static_cast<half>(metal::half(0x1p+00));", "static const int count = static_cast<int>(-2LL);",
				"constexpr  int N = 4;", "if (true) o[0]", "if (false) o[1]"},
		},
		{
			name:  "template instantiations",
			src:   header + "template <typename T, int N = 2>\nkernel void tk(device T* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  threadgroup T b[N];\n  b[i % N] = o[i]; o[i] = b[0];\n}\ntemplate [[host_name(\"tk_f\")]] [[kernel]] void tk<float, 4>(device float*, uint);\ntemplate [[host_name(\"tk_h\")]] kernel decltype(tk<half, 8>) tk<half, 8>;\n",
			entry: "tk_h",
			want: []string{"template<typename T, int N> using mtl_tg0_t = T[N];", "mtl_tg0_t<T, N>& b =",
				"&::mtl_run_tk<float, 4>", "&::mtl_run_tk<half, 8>", "sizeof(::mtl_tg0_t<half, 8>)", `{"tk_h", &::mtl_run_tk<half, 8>, 1, mtl_slots_1, 1024, 1, mtl_bufs_0}`},
			notWant: []string{"host_name"},
		},
		{
			name:    "macros and stage functions",
			src:     header + "#define LOAD(p, i) ((device float*)(p))[i]\n#define HALF_ONE 1.0h\nvertex float4 vs(uint v [[vertex_id]]) { return float4(0); }\nkernel void k(device float* o [[buffer(0)]]) { o[0] = LOAD(o, 1) + HALF_ONE; }\n",
			entry:   "k",
			want:    []string{"#define LOAD(p, i) (( float*)(p))[i]", "#define HALF_ONE metal::half(1.0)"},
			notWant: []string{"vertex_id", "vs("},
		},
		{
			name:  "namespaces and index expressions",
			src:   "#include <metal_stdlib>\n#define OUT_IDX 1\nnamespace ops {\nstruct P { float s; };\nkernel void k(device const P* p [[buffer(0)]], device float* o [[buffer(OUT_IDX)]], metal::uint2 g [[thread_position_in_grid]]) {\n  threadgroup float t[4];\n  t[0] = p->s; o[g.x] = t[0];\n}\n}\n",
			entry: "k",
			want: []string{"namespace ops {\nstatic void mtl_run_k", "static_cast<float *>(mtl_b[(OUT_IDX)])", "&::ops::mtl_run_k",
				"sizeof(::ops::mtl_tg0_t)", "uint2(static_cast<uint>(mtl_c.thread_position_in_grid[0])"},
		},
		{
			name:  "threadgroup macro",
			src:   header + "#define TG threadgroup\nkernel void k(device float* o [[buffer(0)]]) {\n  TG float s[8];\n  TG float* p = s;\n  o[0] = p[0];\n}\n",
			entry: "k",
			want:  []string{"#define TG \n", "typedef float mtl_tg0_t[8];", "mtl_tg0_t& s = *static_cast<mtl_tg0_t*>(mtl_rt::tg_slot(0));", "TG float* p = s;"},
		},
		{
			name:  "host_name on a kernel",
			src:   header + "[[host_name(\"renamed\")]] kernel void k(device float* o [[buffer(0)]]) { o[0] = 0; }\n",
			entry: "renamed",
			want:  []string{`{"k", &::mtl_run_k, 0, nullptr, 1024, 1, mtl_bufs_0}`, `{"renamed", &::mtl_run_k, 0, nullptr, 1024, 1, mtl_bufs_0}`},
		},
		{
			name:  "max threads attribute",
			src:   header + "[[max_total_threads_per_threadgroup(256)]] kernel void k(device float* o [[buffer(0)]]) { o[0] = 0; }\n",
			entry: "k",
			want:  []string{`{"k", &::mtl_run_k, 0, nullptr, 256, 1, mtl_bufs_0}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Translate(backend.Source{Name: "k.metal", Text: []byte(tt.src), Entry: tt.entry, Constants: tt.consts})
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			out := string(u.CPP)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out[strings.Index(out, "\n"):], w) {
					t.Errorf("output contains %q:\n%s", w, out)
				}
			}
			if u.Kernel != tt.entry {
				t.Errorf("Kernel = %q, want %q", u.Kernel, tt.entry)
			}
			if out, err := syntaxCheck(t, u.CPP); err != nil {
				t.Errorf("g++: %v\n%s\n%s", err, out, u.CPP)
			}
		})
	}
}

func TestSlots(t *testing.T) {
	src := header + `
void h2(threadgroup float* p) { threadgroup uint c[3]; p[0] = c[0]; }
void h1() { threadgroup float a[5]; h2(a); }
void unused() { threadgroup float z[100]; }
kernel void k(device float* o [[buffer(0)]]) { threadgroup half s[16]; h1(); o[0] = s[0]; }
kernel void other(device float* o [[buffer(0)]]) { h2(nullptr); }
`
	u, err := Translate(backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Slot{{3, "k", "s", "half[16]"}, {1, "h1", "a", "float[5]"}, {0, "h2", "c", "uint[3]"}}
	if len(u.Slots) != len(want) {
		t.Fatalf("Slots = %v, want %v", u.Slots, want)
	}
	for i := range want {
		if u.Slots[i] != want[i] {
			t.Errorf("Slots[%d] = %v, want %v", i, u.Slots[i], want[i])
		}
	}
	if got := strings.Join(u.Kernels, ","); got != "k,other" {
		t.Errorf("Kernels = %s, want k,other", got)
	}
}

func TestConditionalKernels(t *testing.T) {
	src := header + "#if VARIANT == 1\nkernel void k(device float* o [[buffer(0)]]) { threadgroup float a[8]; o[0] = a[0]; }\n#else\nkernel void k(device float* o [[buffer(0)]]) { threadgroup half b[32]; o[0] = b[0]; }\n#endif\n"
	tests := []struct {
		defines map[string]string
		want    string
	}{
		{map[string]string{"VARIANT": "1"}, "[{0 k a float[8]}]"},
		{map[string]string{"VARIANT": "2"}, "[{0 k b half[32]}]"},
		{nil, "[{0 k a float[8]} {1 k b half[32]}]"}, // undecided: both branches' slots
	}
	for _, tt := range tests {
		u, err := Translate(backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k", Defines: tt.defines})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(u.Slots); got != tt.want {
			t.Errorf("defines %v: slots %s, want %s", tt.defines, got, tt.want)
		}
		if n := strings.Count(string(u.CPP), "static void mtl_run_k("); n != 1 {
			t.Errorf("defines %v: %d wrappers for k, want 1", tt.defines, n)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, src, entry, dir, want string
	}{
		{"unknown entry", header + "kernel void k(device float* o [[buffer(0)]]) {}\n", "nope", "", `^k\.metal:1:1: unknown entry "nope"`},
		{"include without dir", "#include \"x.h\"\n", "k", "", `^k\.metal:1:1: include "x.h": no include directory`},
		{"missing include", "\n  #include \"missing.h\"\n", "k", "DIR", `^k\.metal:2:3: include "missing.h": file not found`},
		{"stage_in", header + "kernel void k(float4 v [[stage_in]]) {}\n", "k", "", `^k\.metal:3:15: kernel k parameter v: attribute \[\[stage_in\]\] is not supported`},
		{"unbound param", header + "kernel void k(uint x) {}\n", "k", "", `^k\.metal:3:15: kernel k parameter x: no binding attribute`},
		{"nonzero initialiser", header + "kernel void k() {\n  threadgroup float s[2] = {1, 0};\n}\n", "k", "", `^k\.metal:4:29: threadgroup variable s has a non-zero initialiser`},
		{"macro storage", header + "#define TG threadgroup float s[4];\nkernel void k() {}\n", "k", "", `^k\.metal:3:1: threadgroup declaration inside macro`},
		{"alignas threadgroup", header + "kernel void k() {\n  alignas(16) threadgroup float s[4];\n}\n", "k", "", `^k\.metal:4:15: threadgroup declaration not supported here`},
		{"file scope", header + "threadgroup float g[4];\nkernel void k() {}\n", "k", "", `^k\.metal:3:1: threadgroup variable at file scope`},
		{"bad instantiation", header + "template [[host_name(\"x\")]] kernel void nope<float>(device float*);\n", "x", "", `^k\.metal:3:1: host_name "x" instantiates nope`},
		{"unterminated comment", "/* open", "k", "", `^k\.metal:1:1: unterminated comment`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "DIR" {
				dir = t.TempDir()
			}
			_, err := Translate(backend.Source{Name: "k.metal", Text: []byte(tt.src), Entry: tt.entry, Dir: dir})
			if err == nil {
				t.Fatalf("Translate succeeded, want error %s", tt.want)
			}
			if !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("error = %q, want match for %s", err, tt.want)
			}
		})
	}
}

// mapLines follows the #line directives of out and returns, for each marker
// comment /*@N*/ in it, the file and line the compiler would report.
func mapLines(out string) map[string]string {
	got := map[string]string{}
	file, line := "", 0
	sc := bufio.NewScanner(strings.NewReader(out))
	marker := regexp.MustCompile(`/\*@(\w+)\*/`)
	lineDir := regexp.MustCompile(`^#line (\d+) "([^"]*)"`)
	for sc.Scan() {
		text := sc.Text()
		if m := lineDir.FindStringSubmatch(text); m != nil {
			n, _ := strconv.Atoi(m[1])
			file, line = m[2], n
			continue
		}
		for _, m := range marker.FindAllStringSubmatch(text, -1) {
			got[m[1]] = file + ":" + strconv.Itoa(line)
		}
		line++
	}
	return got
}

func TestLineDirectives(t *testing.T) {
	dir := t.TempDir()
	inc := "#pragma once\n/*@h1*/ inline float twice(float x) {\n  return 2 * x; /*@h3*/\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "util.h"), []byte(inc), 0o644); err != nil {
		t.Fatal(err)
	}
	src := header + "#include \"util.h\"\n#include \"util.h\"\n/*@m5*/\n" +
		"void helper() {\n  threadgroup float t[4]; /*@m7*/\n  t[0] = 1;\n}\n" +
		"kernel void k(device float* o [[buffer(0)]],\n  uint i [[thread_position_in_grid]]) { /*@m11*/\n" +
		"  threadgroup float s[\n  4]; /*@m13*/\n  s[0] = twice(o[i]); helper();\n  o[i] = s[0]; /*@m15*/\n}\n" +
		"template <typename T>\nkernel void tk(device T* o [[buffer(0)]]) {\n  threadgroup T b[2]; /*@m19*/\n  o[0] = b[0];\n}\n" +
		"template [[host_name(\"tk\")]]\n  kernel decltype(tk<float>) tk<float>;\n/*@m24*/\n"
	u, err := Translate(backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := mapLines(string(u.CPP))
	want := map[string]string{
		"h1": "util.h:2", "h3": "util.h:3",
		"m5": "k.metal:5", "m7": "k.metal:7", "m11": "k.metal:11", "m13": "k.metal:13",
		"m15": "k.metal:15", "m19": "k.metal:19", "m24": "k.metal:24",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("marker %s maps to %q, want %q", k, got[k], w)
		}
	}
	if n := strings.Count(string(u.CPP), "twice(float x)"); n != 1 {
		t.Errorf("#pragma once header inlined %d times, want 1", n)
	}
}

// syntaxCheck compiles a translation with the C++ compiler ($CXX, else
// g++) and -fsyntax-only against the prelude. Without a compiler it skips
// the test, or fails it under CI (testenv.RequireCXX); a missing prelude
// fails it.
func syntaxCheck(t *testing.T, cpp []byte) ([]byte, error) {
	t.Helper()
	cxx := testenv.RequireCXX(t)
	prelude, _ := filepath.Abs("../prelude")
	runtime, _ := filepath.Abs("../runtime")
	if _, err := os.Stat(filepath.Join(prelude, "metal_stdlib")); err != nil {
		t.Fatalf("prelude not present: %v", err)
	}
	cmd := testenv.Command(cxx, "-std=c++17", "-fsyntax-only", "-ffp-contract=off", "-I", prelude, "-I", runtime, "-x", "c++", "-")
	cmd.Stdin = bytes.NewReader(cpp)
	return cmd.CombinedOutput()
}

// TestCompiles checks that the conformance kernels translate and compile.
func TestCompiles(t *testing.T) {
	files, _ := filepath.Glob("../conformance/testdata/*.metal")
	if len(files) == 0 {
		t.Fatal("no conformance kernels in ../conformance/testdata to compile")
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			entry := firstEntry(t, text)
			u, err := Translate(backend.Source{Name: name, Text: text, Entry: entry, Dir: filepath.Dir(f)})
			if err != nil {
				t.Fatal(err)
			}
			if out, err := syntaxCheck(t, u.CPP); err != nil {
				t.Errorf("g++: %v\n%s", err, out)
			}
		})
	}
}

// TestCompilerErrorsPointAtSource checks that g++ reports an error in a
// kernel at the .metal file and line, past inserted aliases.
func TestCompilerErrorsPointAtSource(t *testing.T) {
	t.Run("alias", func(t *testing.T) {
		src := header + "kernel void k(device float* o [[buffer(0)]]) {\n  constexpr int N = 4;\n  threadgroup float s[N];\n  o[0] = s[0];\n}\n"
		u, err := Translate(backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k"})
		if err != nil {
			t.Fatal(err)
		}
		out, err := syntaxCheck(t, u.CPP)
		if err == nil {
			t.Skip("the compiler accepted a local constant in a threadgroup size")
		}
		if !bytes.Contains(out, []byte("k.metal:5:")) {
			t.Errorf("g++ output does not point at k.metal:5:\n%s", out)
		}
	})
	src := header + "void h() {\n  threadgroup float t[4];\n  t[0] = 1;\n}\nkernel void k(device float* o [[buffer(0)]]) {\n  threadgroup float s[4];\n  h();\n  o[0] = s[0] + undefined_name;\n}\n"
	u, err := Translate(backend.Source{Name: "dir/k.metal", Text: []byte(src), Entry: "k"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := syntaxCheck(t, u.CPP)
	if err == nil {
		t.Fatalf("g++ accepted an undefined name:\n%s", u.CPP)
	}
	if !bytes.Contains(out, []byte("dir/k.metal:10:")) || !bytes.Contains(out, []byte("undefined_name")) {
		t.Errorf("g++ output does not point at dir/k.metal:10:\n%s", out)
	}
}

// firstEntry is the first kernel the translation of text exports.
func firstEntry(t *testing.T, text []byte) string {
	t.Helper()
	tr, err := run(backend.Source{Name: "x.metal", Text: text})
	if err != nil || len(tr.entries) == 0 {
		t.Fatalf("no kernels: %v", err)
	}
	return tr.entries[0].name
}

// TestNoPanicOnTruncatedInput translates every prefix (in steps) of the
// conformance kernels and of mangled copies: bad input must give errors,
// never a panic.
func TestNoPanicOnTruncatedInput(t *testing.T) {
	files, _ := filepath.Glob("../conformance/testdata/*.metal")
	if len(files) == 0 {
		t.Fatal("no conformance kernels in ../conformance/testdata to mangle")
	}
	try := func(name string, text []byte) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Translate panicked on %s (%d bytes): %v\n%s", name, len(text), r, text)
			}
		}()
		Translate(backend.Source{Name: name, Text: text, Entry: "k"})
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for cut := 0; cut <= len(text); cut += 3 {
			try(f, text[:cut])
			// Drop one byte instead: unbalances brackets and splits tokens.
			if cut < len(text) {
				mangled := append(append([]byte{}, text[:cut]...), text[cut+1:]...)
				try(f, mangled)
			}
		}
	}
}

// FuzzTranslate checks that no input makes Translate panic.
func FuzzTranslate(f *testing.F) {
	files, _ := filepath.Glob("../conformance/testdata/*.metal")
	for _, file := range files {
		if text, err := os.ReadFile(file); err == nil {
			f.Add(text)
		}
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		Translate(backend.Source{Name: "f.metal", Text: text, Entry: "k"})
	})
}
