package msl

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// memFS returns a ReadFile over files, by path.
func memFS(files map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
}

// count counts the statements of each kind in the file's own functions.
func count(f *File) (loops, barriers, pragmaLoops int) {
	for _, fn := range f.Functions() {
		Walk(fn.Body, func(s Stmt) bool {
			switch s := s.(type) {
			case *For:
				loops++
				if len(s.Pragmas) > 0 {
					pragmaLoops++
				}
			case *While, *Do:
				loops++
			case *Barrier:
				barriers++
			}
			return true
		})
	}
	return
}

const mlxHeader = `#pragma once
#include <metal_stdlib>
#define MLX_MTL_PRAGMA_UNROLL _Pragma("clang loop unroll(full)")
#define METAL_FUNC inline __attribute__((always_inline))
static constant constexpr const int SIMD_SIZE = 32;
template <typename T> struct MD { T m; T d; };
`

const mlxKernel = `#include "mlx/utils.h"
using namespace metal;
template <typename T>
[[kernel]] void k(device T* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  threadgroup T buf[SIMD_SIZE];
  threadgroup MD<float> md[4];
  MLX_MTL_PRAGMA_UNROLL
  for (int j = 0; j < 4; j++) { x[i] += buf[j]; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  MLX_MTL_PRAGMA_UNROLL for (int j = 0; j < 4; j++) { x[i] += md[j].m; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
}
template [[host_name("k_float")]] [[kernel]] decltype(k<float>) k<float>;
`

// TestUnknownMacroKeepsStatements checks that a macro defined in a header
// that was not read never swallows the loop or barrier after it: every
// statement is parsed, the loops after it carry a caveat, and a warning
// names the macro and suggests -I.
func TestUnknownMacroKeepsStatements(t *testing.T) {
	f, err := ParseOptions("k.metal", []byte(mlxKernel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	loops, barriers, _ := count(f)
	if loops != 2 || barriers != 2 {
		t.Errorf("loops, barriers = %d, %d; want 2, 2", loops, barriers)
	}
	var fors []*For
	Walk(f.Func("k").Body, func(s Stmt) bool {
		if fr, ok := s.(*For); ok {
			fors = append(fors, fr)
		}
		return true
	})
	for _, fr := range fors {
		why, ok := f.MacroCaveat(fr.Pos)
		if !ok || !strings.Contains(why, "MLX_MTL_PRAGMA_UNROLL") {
			t.Errorf("loop at %v: caveat %q, %v; want one naming the macro", f.Position(fr.Pos), why, ok)
		}
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0].Msg, "unknown macro MLX_MTL_PRAGMA_UNROLL (2 uses") ||
		!strings.Contains(f.Warnings[0].Msg, "-I DIR") || !strings.Contains(f.Warnings[0].Msg, `#include "mlx/utils.h" not read`) {
		t.Errorf("warnings = %v", f.Warnings)
	}
}

// TestIncludes checks that headers are read from the including file's
// directory and then the -I directories, and give their macros, types and
// constants to the file, while sites stay in the file.
func TestIncludes(t *testing.T) {
	files := map[string]string{
		"src/k.metal":       mlxKernel,
		"inc/mlx/utils.h":   mlxHeader,
		"src/local.h":       "#define LOCAL 1\n",
		"inc/other/local.h": "#define LOCAL 2\n",
	}
	f, err := ParseOptions("src/k.metal", []byte(mlxKernel), Options{IncludeDirs: []string{"inc"}, ReadFile: memFS(files)})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 0 {
		t.Errorf("warnings: %v", f.Warnings)
	}
	if len(f.Includes) != 1 || f.Includes[0].Path != "inc/mlx/utils.h" || f.Includes[0].File == nil {
		t.Fatalf("includes = %+v", f.Includes)
	}
	if h := f.Includes[0].File; len(h.Includes) != 1 || !h.Includes[0].Metal || h.Includes[0].File != nil {
		t.Errorf("<metal_stdlib> = %+v, want Metal's own, not read", h.Includes[0])
	}
	if len(f.Funcs) != 1 {
		t.Errorf("file functions = %d, want the file's own 1", len(f.Funcs))
	}
	_, _, pragmaLoops := count(f)
	if pragmaLoops != 2 {
		t.Errorf("loops with the header's pragma = %d, want 2", pragmaLoops)
	}
	m, err := ThreadgroupMemory(f, "k_float", Env{})
	if err != nil {
		t.Fatal(err)
	}
	// float buf[32] then MD<float> md[4] (8 bytes each).
	if !m.Known || m.Total != 128+32 {
		t.Errorf("threadgroup memory: %s", render(m))
	}

	// The including file's directory comes first, then -I.
	src := "#include \"local.h\"\nconstant int x = LOCAL;\n"
	for _, tt := range []struct {
		name string
		dirs []string
		want int64
	}{{"src/k.metal", []string{"inc/other"}, 1}, {"top.metal", []string{"inc/other"}, 2}} {
		g, err := ParseOptions(tt.name, []byte(src), Options{IncludeDirs: tt.dirs, ReadFile: memFS(files)})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := (&Env{File: g}).Eval("x"); !ok || v != tt.want {
			t.Errorf("%s: x = %d, %v; want %d", tt.name, v, ok, tt.want)
		}
	}

	// A header not found is a warning that names it and -I.
	g, err := ParseOptions("src/k.metal", []byte(mlxKernel), Options{ReadFile: memFS(files)})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Warnings) == 0 || !strings.Contains(g.Warnings[0].Msg, `cannot find #include "mlx/utils.h" (searched src)`) {
		t.Errorf("warnings = %v", g.Warnings)
	}
}

// TestIncludeCycle checks that headers that include each other are read
// once each.
func TestIncludeCycle(t *testing.T) {
	files := map[string]string{
		"a.h": "#include \"b.h\"\n#define A 1\n",
		"b.h": "#include \"a.h\"\n#define B 2\n",
	}
	reads := 0
	read := func(name string) ([]byte, error) {
		reads++
		return memFS(files)(name)
	}
	f, err := ParseOptions("k.metal", []byte("#include \"a.h\"\nconstant int x = A + B;\n"), Options{ReadFile: read})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := (&Env{File: f}).Eval("x"); !ok || v != 3 {
		t.Errorf("x = %d, %v; want 3", v, ok)
	}
	if reads != 2 {
		t.Errorf("%d reads, want 2", reads)
	}
}

const candleKernel = `#define MAX_SHARED 256
#define REDUCE(NAME, T) \
kernel void NAME(device const T *src, device T *dst, uint tid [[thread_index_in_threadgroup]]) { \
    threadgroup T shared[MAX_SHARED]; \
    shared[tid] = src[tid]; \
    for (uint s = 128; s > 0; s >>= 1) { \
        if (tid < s) { shared[tid] += shared[tid + s]; } \
        threadgroup_barrier(mem_flags::mem_threadgroup); \
    } \
    dst[0] = shared[0]; \
}
REDUCE(sum_f32, float)
REDUCE(sum_f16, half)
`

// TestMacroKernels checks that kernels written inside a #define body are
// entry points with their sizes, and that their statements are inside a
// macro body, at the #define's text.
func TestMacroKernels(t *testing.T) {
	f, err := Parse("k.metal", []byte(candleKernel))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ep := range f.EntryPoints() {
		names = append(names, ep.Name)
		if ep.Expansion == nil || ep.Expansion.Macro != "REDUCE" {
			t.Errorf("%s: expansion %+v", ep.Name, ep.Expansion)
		}
	}
	if strings.Join(names, ",") != "sum_f32,sum_f16" {
		t.Errorf("entry points = %v", names)
	}
	for name, want := range map[string]int64{"sum_f32": 1024, "sum_f16": 512} {
		m, err := ThreadgroupMemory(f, name, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if !m.Known || m.Total != want {
			t.Errorf("%s: %s", name, render(m))
		}
	}
	fns := f.FuncsNamed("sum_f16")
	if len(fns) != 1 {
		t.Fatalf("FuncsNamed(sum_f16) = %v", fns)
	}
	xf := f.FileOf(fns[0])
	var loop *For
	Walk(fns[0].Body, func(s Stmt) bool {
		if fr, ok := s.(*For); ok {
			loop = fr
		}
		return true
	})
	if loop == nil {
		t.Fatal("no loop in the macro's kernel")
	}
	why, ok := xf.MacroCaveat(loop.Pos)
	if !ok || !strings.Contains(why, "inside the body of macro REDUCE (expanded at 13:1)") {
		t.Errorf("caveat = %q, %v", why, ok)
	}
	if p := f.Position(xf.OriginPos(loop.Pos)); p.Line != 6 || p.Column != 5 {
		t.Errorf("loop maps to %v, want the #define's line 6, column 5", p)
	}
}

// TestCmdDefineVersusFile checks the compiler's rule: the file's own
// unconditional #define wins over -D (with a warning), while -D decides a
// define the file makes only when it is not given.
func TestCmdDefineVersusFile(t *testing.T) {
	src := "#define N 64\n#ifndef M\n#define M 8\n#endif\nconstant int x = N;\nconstant int y = M;\n"
	f, err := ParseOptions("k.metal", []byte(src), Options{Defines: map[string]string{"N": "4", "M": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{File: f}
	if v, ok := env.Eval("x"); !ok || v != 64 {
		t.Errorf("x = %d, %v; want the file's 64", v, ok)
	}
	if v, ok := env.Eval("y"); !ok || v != 2 {
		t.Errorf("y = %d, %v; want -D's 2", v, ok)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0].Msg, "the file's #define wins over -D N=4") {
		t.Errorf("warnings = %v", f.Warnings)
	}
}

// TestBOM checks that a leading UTF-8 byte order mark is accepted.
func TestBOM(t *testing.T) {
	src := "\xEF\xBB\xBF#define N 4\nkernel void k(device float *p) { for (int i = 0; i < N; ++i) { p[i] = 0; } }\n"
	f, err := Parse("k.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Defines) != 1 || f.Func("k") == nil {
		t.Errorf("defines %d, k %v", len(f.Defines), f.Func("k"))
	}
	if loops, _, _ := count(f); loops != 1 {
		t.Errorf("loops = %d", loops)
	}
}

// TestFuncsNamed checks names, qualified names and host names.
func TestFuncsNamed(t *testing.T) {
	src := `struct GemvKernel { static void run(device float *p) { p[0] = 0; } };
struct Op { float operator()(float x) const { return x; } };
struct Other { static void run(device float *p) { p[1] = 0; } };
template <typename T> kernel void k(device T *p) { GemvKernel::run(p); }
template [[host_name("k_f32")]] kernel void k<float>(device float *);
[[host_name("plain")]] kernel void named(device float *p) { p[0] = 1; }
`
	f, err := Parse("k.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		want string
	}{
		{"GemvKernel::run", "GemvKernel::run"},
		{"run", "GemvKernel::run,Other::run"},
		{"Op::operator()", "Op::operator()"},
		{"Op::operator ()", "Op::operator()"},
		{"k_f32", "k"},
		{"plain", "named"},
		{"nope", ""},
	} {
		var got []string
		for _, fn := range f.FuncsNamed(tt.name) {
			got = append(got, QualifiedName(fn))
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("FuncsNamed(%q) = %v, want %s", tt.name, got, tt.want)
		}
	}
}

// TestThreadgroupRealWorldTypes checks sizes a compiler knows: function-local
// aliases, dependent member types and constants, template structs, and a
// known part over the limit.
func TestThreadgroupRealWorldTypes(t *testing.T) {
	src := `template <typename T> struct MD { T m; T d; };
template <typename T, int BM, int TM = 4>
struct Kern {
  typedef float acc_type;
  static constexpr constant int block = BM * TM;
  static constexpr constant int tg_size = BM > 1 ? BM * block : 0;
};
template <typename T, int BM>
kernel void k(device T *p) {
  using kern = Kern<T, BM>;
  typedef MD<T> md_t;
  threadgroup typename kern::acc_type a[kern::tg_size == 0 ? 1 : kern::tg_size];
  threadgroup md_t b[2];
  threadgroup MD<half> c[3];
}
template [[host_name("k4")]] kernel void k<float, 4>(device float *);
template [[host_name("k1")]] kernel void k<float, 1>(device float *);
kernel void big(constant uint &n) {
  threadgroup float x[5000];
  threadgroup float y[n];
}
`
	f, err := Parse("k.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"k4": 4*64 + 16 + 12, "k1": 4 + 16 + 12} {
		m, err := ThreadgroupMemory(f, name, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if !m.Known || m.Declared != want {
			t.Errorf("%s: declared %d, want %d: %s", name, m.Declared, want, render(m))
		}
	}
	m, err := ThreadgroupMemory(f, "big", Env{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Known || m.Total != 20000 {
		t.Errorf("big: known %v, total %d; want unknown with a known part of 20000", m.Known, m.Total)
	}
}

// TestHeaderErrorsAreWarnings checks that errors in a header are warnings of
// the including file, not errors.
func TestHeaderErrorsAreWarnings(t *testing.T) {
	files := map[string]string{"bad.h": "struct { \n"}
	f, err := ParseOptions("k.metal", []byte("#include \"bad.h\"\nkernel void k() {}\n"), Options{ReadFile: memFS(files)})
	if err != nil {
		var el ErrorList
		errors.As(err, &el)
		t.Fatalf("errors: %v", el)
	}
	if len(f.Warnings) == 0 || !strings.Contains(f.Warnings[0].Msg, "in included header") {
		t.Errorf("warnings = %v", f.Warnings)
	}
}

// TestExampleKernels parses the example kernels written in the styles of
// ggml, MLX, candle and metal-flash-attention with their include
// directories, as `metalab tgmem -I` does: no errors or warnings, every
// entry point found and its threadgroup memory known.
func TestExampleKernels(t *testing.T) {
	for _, tt := range []struct {
		file, inc string
		entries   int
	}{
		{"ggml/ggml-ops.metal", "ggml/include", 9},
		{"mlx/kernels.metal", "mlx/include", 10},
		{"candle/candle-ops.metal", "candle/include", 15},
		{"mfa/attention.metal", "mfa/include", 1},
	} {
		t.Run(tt.file, func(t *testing.T) {
			root := "../kernels/examples/"
			src, err := os.ReadFile(root + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseOptions(root+tt.file, src, Options{IncludeDirs: []string{root + tt.inc}})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range f.Warnings {
				t.Errorf("warning: %v", w)
			}
			eps := f.EntryPoints()
			if len(eps) != tt.entries {
				t.Errorf("%d entry points, want %d", len(eps), tt.entries)
			}
			for _, ep := range eps {
				m, err := ThreadgroupMemory(f, ep.Name, Env{})
				if err != nil {
					t.Fatal(err)
				}
				if !m.Known {
					t.Errorf("%s: %s", ep.Name, render(m))
				}
			}
		})
	}
}
