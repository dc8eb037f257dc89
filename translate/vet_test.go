package translate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
)

// vetHeader starts the sources of the vetting tests.
const vetHeader = "#include <metal_stdlib>\nusing namespace metal;\n"

// vetSource vets text as k.metal in a fresh directory holding files, and
// returns the refusals as "line:col: msg" lines (the file name kept when it
// is not k.metal).
func vetSource(t *testing.T, text string, files map[string]string) ([]string, error) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	err := Vet(backend.Source{Name: "k.metal", Text: []byte(text), Dir: dir, Entry: "k"}, nil)
	return refusals(err), err
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// refusals returns the refusals of err as "line:col: msg", prefixed by the
// file name unless it is k.metal; nil when err is not a *Refusal.
func refusals(err error) []string {
	var r *Refusal
	if !errors.As(err, &r) {
		return nil
	}
	var out []string
	for _, e := range r.Errors {
		s := e.Error()
		s = strings.TrimPrefix(s, "k.metal:")
		out = append(out, s)
	}
	return out
}

func TestVetRefuses(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		files map[string]string
		want  string // the first refusal, "line:col: message" (a prefix of it)
	}{
		// Inline assembly.
		{"asm", "kernel void k() {\n  asm(\"nop\");\n}\n", nil, "4:3: inline assembly (asm) is not allowed"},
		{"asm volatile", "kernel void k() {\n  asm volatile(\"syscall\" ::: \"memory\");\n}\n", nil, "4:3: inline assembly (asm)"},
		{"__asm__", "kernel void k() { __asm__ __volatile__(\"int3\"); }\n", nil, "3:19: inline assembly (__asm__)"},
		{"__asm", "kernel void k() { __asm(\"nop\"); }\n", nil, "3:19: inline assembly (__asm)"},
		{"asm label", "int sys(const char*) asm(\"system\");\n", nil, "3:5: function sys is declared but not defined"},
		// Attributes.
		{"attribute constructor", "__attribute__((constructor)) void init() {}\n", nil, "3:1: __attribute__((constructor)) is not allowed"},
		{"attribute section", "void f() __attribute__((always_inline, section(\".init_array\")));\nvoid f() {}\n", nil, "3:10: __attribute__((section)) is not allowed"},
		{"declspec", "__declspec(dllexport) void f() {}\n", nil, "3:1: __declspec is not allowed"},
		{"gnu attribute", "[[gnu::constructor]] void init() {}\n", nil, "3:1: attribute [[gnu::constructor]] is not a Metal attribute"},
		{"clang attribute", "[[clang::annotate(\"x\")]] void f() {}\n", nil, "3:1: attribute [[clang::annotate]] is not a Metal attribute"},
		{"unknown attribute", "kernel void k(device float* o [[buffer(0), weird_attr]]) {}\n", nil, "3:31: attribute [[weird_attr]] is not a Metal attribute"},
		{"using attribute list", "[[using gnu: constructor]] void init() {}\n", nil, "3:1: [[using ...]] attribute lists are not allowed"},
		// Calls of functions nobody declares.
		{"system", "kernel void k() { system(\"rm -rf ~\"); }\n", nil, "3:19: call of system: the C library is not available to Metal kernels"},
		{"fopen", "kernel void k() { fopen(\"/etc/passwd\", \"r\"); }\n", nil, "3:19: call of fopen: the C library"},
		{"popen", "kernel void k() { popen(\"id\", \"r\"); }\n", nil, "3:19: call of popen: the C library"},
		{"syscall", "kernel void k() { syscall(59, 0, 0, 0); }\n", nil, "3:19: call of syscall: the C library"},
		{"dlopen", "kernel void k() { dlopen(\"libc.so.6\", 2); }\n", nil, "3:19: call of dlopen: the C library"},
		{"exit", "kernel void k() { exit(1); }\n", nil, "3:19: call of exit: the C library"},
		{"abort", "kernel void k() { abort(); }\n", nil, "3:19: call of abort: the C library"},
		{"getenv", "kernel void k() { getenv(\"HOME\"); }\n", nil, "3:19: call of getenv: the C library"},
		{"printf", "kernel void k() { printf(\"%d\", 1); }\n", nil, "3:19: call of printf: the C library"},
		{"malloc", "kernel void k() { malloc(16); }\n", nil, "3:19: call of malloc: the C library"},
		{"undeclared", "kernel void k() { frobnicate(1); }\n", nil, "3:19: call of undeclared function frobnicate: neither the source, its includes nor metal_stdlib declares it"},
		{"undeclared template call", "kernel void k() { frob<int>(1); }\n", nil, "3:19: call of undeclared function frob"},
		{"host function address", "kernel void k(device ulong* o [[buffer(0)]]) { o[0] = (ulong)&system; }\n", nil, "3:63: system: the C library is not available"},
		{"parenthesised call", "kernel void k() { (system)(\"id\"); }\n", nil, "3:20: system: the C library is not available"},
		{"call in macro", "#define RUN(c) system(c)\nkernel void k() { RUN(\"id\"); }\n", nil, "3:1: call of system: the C library is not available to Metal kernels (in the definition of macro RUN)"},
		{"call in initialiser", "constant int x = system(\"id\");\n", nil, "3:18: call of system"},
		// Qualified names.
		{"std", "kernel void k() { std::abort(); }\n", nil, "3:19: std::abort: the C++ standard library is not available in Metal"},
		{"std type", "kernel void k() { std::vector<int> v; }\n", nil, "3:19: std::vector: the C++ standard library"},
		{"leading ::", "kernel void k() { ::system(\"id\"); }\n", nil, "3:19: ::system reaches outside the source"},
		{"leading ::std", "kernel void k() { ::std::abort(); }\n", nil, "3:19: std::: the C++ standard library"},
		{"runtime namespace", "kernel void k() { mtl_rt::tg_slot(7); }\n", nil, "3:19: mtl_rt::tg_slot: mtl_rt is not declared"},
		{"prelude internals", "kernel void k() { metal::mtl_detail::bits_of(1.0f); mtl_detail::bits_of(1.0f); }\n", nil, "3:53: mtl_detail::bits_of: mtl_detail is not declared"},
		{"using namespace std", "using namespace std;\n", nil, "3:17: using namespace std: only metal and the source's own namespaces"},
		{"namespace alias", "namespace s = std;\n", nil, "3:15: namespace s = std: only metal"},
		{"namespace std", "namespace std { int system(const char*); }\n", nil, "3:1: namespace std may not be declared or extended"},
		// Reserved identifiers.
		{"builtin", "kernel void k() { __builtin_trap(); }\n", nil, "3:19: the compiler builtin __builtin_trap is not allowed"},
		{"builtin via paste", "#define P(a, b) a##b\nkernel void k() { P(_, _builtin_trap)(); }\n", nil, "4:19: the compiler builtin __builtin_trap is not allowed in a Metal kernel (in the expansion of macro P)"},
		{"reserved", "kernel void k() { int __x = 0; }\n", nil, "3:23: the reserved identifier __x is not allowed"},
		{"has_include", "#if __has_include(<stdlib.h>)\n#endif\n", nil, "3:1: __has_include is not allowed: it probes the host's files"},
		// Declarations Metal does not have.
		{"extern C", "extern \"C\" int system(const char*);\n", nil, "3:1: extern \"C\" linkage is not allowed"},
		{"extern C block", "extern \"C\" {\nint puts(const char*);\n}\n", nil, "3:1: extern \"C\" linkage"},
		{"extern", "extern int environ;\n", nil, "3:1: extern declarations are not allowed"},
		{"new", "kernel void k() { int* p = new int; }\n", nil, "3:28: new is not available in Metal"},
		{"delete", "void f(thread int* p) { delete p; }\n", nil, "3:25: delete is not available in Metal"},
		{"operator new", "void* operator new(size_t n) { return nullptr; }\n", nil, "3:16: new is not available"},
		{"throw", "void f() { throw 1; }\n", nil, "3:12: exception handling (throw) is not available in Metal"},
		{"try", "void f() { try { } catch (...) { } }\n", nil, "3:12: exception handling (try)"},
		{"thread_local", "thread_local int x;\n", nil, "3:1: thread_local storage is not available in Metal"},
		{"virtual", "struct S { virtual void f() {} };\n", nil, "3:12: virtual functions are not available in Metal"},
		{"dynamic_cast", "struct S { }; void f(thread S* s) { dynamic_cast<thread S*>(s); }\n", nil, "3:37: run-time type information (dynamic_cast)"},
		{"typeid", "void f() { typeid(int); }\n", nil, "3:12: run-time type information (typeid)"},
		{"goto", "void f() { goto out; out: return; }\n", nil, "3:12: goto is not available in Metal"},
		// Program-scope variables.
		{"mutable global", "int counter = 0;\n", nil, "3:5: program-scope variable counter is not constant"},
		{"dynamic initialiser", "int f() { return 1; }\nconstant int x = f();\n", nil, "4:18: program-scope variable x has a dynamic initialiser: it calls f"},
		{"direct initialiser", "int f() { return 1; }\nconstant int x(f());\n", nil, "4:16: program-scope variable x has a dynamic initialiser"},
		{"global object", "struct S { S() {} };\nS s;\n", nil, "4:3: program-scope variable s is not constant"},
		{"static member", "int f() { return 1; }\nstruct S { static inline int x = f(); };\n", nil, "4:30: static data member x is not constant"},
		{"static member initialiser", "int f() { return 1; }\nstruct S { static constexpr constant int x = f(); };\n", nil, "4:46: program-scope variable x has a dynamic initialiser: it calls f"},
		{"constant object with a constructor", "struct S { int x; S() { x = 1; } };\nconstant S s;\n", nil, "4:12: program-scope variable s has a dynamic initialiser: S's constructor or destructor"},
		{"constant object with a destructor", "struct S { int x; ~S() { } };\nconstant S s = {1};\n", nil, "4:12: program-scope variable s has a dynamic initialiser: S's constructor"},
		{"global via macro", "#define G(n) int n;\nG(g)\n", nil, "4:1: program-scope variable g is not constant: Metal allows program-scope variables only in the constant address space, with a constant initialiser (in the expansion of macro G)"},
		// Pragmas.
		{"pragma GCC optimize", "#pragma GCC optimize(\"Ofast\")\n", nil, "3:1: #pragma GCC optimize is not allowed: it changes how the kernel is compiled"},
		{"pragma GCC target", "#pragma GCC target(\"avx2\")\n", nil, "3:1: #pragma GCC target is not allowed"},
		{"pragma push_options", "#pragma GCC push_options\n", nil, "3:1: #pragma GCC push_options is not allowed"},
		{"pragma push_macro", "#pragma push_macro(\"X\")\n", nil, "3:1: #pragma push_macro is not a pragma Metal kernels may use"},
		{"pragma redefine_extname", "#pragma redefine_extname f system\n", nil, "3:1: #pragma redefine_extname is not a pragma"},
		{"_Pragma", "kernel void k() { _Pragma(\"GCC optimize(\\\"O0\\\")\") }\n", nil, "3:19: #pragma GCC optimize is not allowed"},
		{"_Pragma in macro", "#define OPT _Pragma(\"GCC target(\\\"avx\\\")\")\nOPT\n", nil, "3:1: #pragma GCC target is not allowed: it changes how the kernel is compiled (in the definition of macro OPT)"},
		{"pragma clang attribute", "#pragma clang attribute push (__attribute__((constructor)), apply_to = function)\n", nil, "3:1: #pragma clang attribute is not allowed"},
		// Includes.
		{"include absolute", "#include \"/etc/passwd\"\n", nil, "3:1: #include \"/etc/passwd\": absolute include paths are not allowed"},
		{"include escaping", "#include \"../../../../../../../../etc/passwd\"\n", nil, "3:1: #include \"../../../../../../../../etc/passwd\": the "},
		{"include host header", "#include <stdlib.h>\n", nil, "3:1: #include <stdlib.h>: only Metal's headers"},
		{"include host C++ header", "#include <cstdlib>\n", nil, "3:1: #include <cstdlib>: only Metal's headers"},
		{"include metal_ escape", "#include <metal_../../etc/passwd>\n", nil, "3:1: #include <metal_../../etc/passwd>: only Metal's headers"},
		{"include_next", "#include_next <metal_stdlib>\n", nil, "3:1: #include_next is not allowed"},
		{"import", "#import \"x.h\"\n", nil, "3:1: #import is not allowed"},
		{"embed", "#embed \"x.bin\"\n", nil, "3:1: #embed is not allowed"},
		{"computed include", "#define H \"x.h\"\n#include H\n", map[string]string{"x.h": ""}, "4:1: #include H: computed includes are not allowed"},
		{"refused in include", "#include \"inc/h.h\"\n", map[string]string{"inc/h.h": "// a helper\nvoid f() { asm(\"nop\"); }\n"}, "inc/h.h:2:12: inline assembly (asm)"},
		{"escaping include in skipped branch", "#if 0\n#include \"../../../../../../../../etc/passwd\"\n#endif\n", nil, "4:1: #include \"../../../../../../../../etc/passwd\": the "},
		{"unsigned condition", "#if -1 > 0u\nkernel void k() { system(\"id\"); }\n#endif\n", nil, "4:19: call of system"},
		{"condition on a macro a header changes", "#define X 0\n#include \"h.h\"\n#if X\nkernel void k() { system(\"id\"); }\n#endif\n", map[string]string{"h.h": "#undef X\n#define X 1\n"}, "6:19: call of system"},
		{"condition on an unknown macro", "#ifdef __x86_64__\nkernel void k() { system(\"id\"); }\n#endif\n", nil, "4:19: call of system"},
		// Other preprocessor tricks.
		{"asm in skipped branch", "#define X 0\n#if X\nvoid f() { asm(\"nop\"); }\n#endif\n", nil, "5:12: inline assembly (asm)"},
		{"asm by pasting", "#define CAT(a, b) a##b\nvoid f() { CAT(a, sm)(\"nop\"); }\n", nil, "4:12: inline assembly (asm) is not allowed in a Metal kernel (in the expansion of macro CAT)"},
		{"asm through a macro", "#define A asm\nvoid f() { A(\"nop\"); }\n", nil, "3:1: inline assembly (asm) is not allowed in a Metal kernel (in the definition of macro A)"},
		{"asm by pasting in one branch", "#ifdef __x86_64__\n#define P(a, b) a##b\n#else\n#define P(a, b)\n#endif\nvoid f() { P(a, sm) volatile(\"syscall\"); }\n", nil, "8:12: inline assembly (asm) is not allowed in a Metal kernel (in the expansion of macro P)"},
		{"asm by an undefined macro in one branch", "#define P(a, b) a##b\n#ifdef __x86_64__\n#undef P\n#define P(a, b)\n#endif\nvoid f() { P(a, sm) volatile(\"syscall\"); }\n", nil, "8:12: inline assembly (asm) is not allowed in a Metal kernel (in the expansion of macro P)"},
		{"line splice", "void f() { as\\\nm(\"nop\"); }\n", nil, "3:14: a line splice (backslash-newline) outside a preprocessor directive is allowed only between tokens already apart"},
		{"digraph", "%:include <stdlib.h>\n", nil, "3:1: the digraph %: is not allowed"},
		{"unknown directive", "#ident \"x\"\n", nil, "3:1: #ident is not a directive Metal kernels may use"},
		{"define keyword", "#define return system(\"id\"); return\n", nil, "3:1: #define return: redefining a keyword is not allowed"},
		{"function pointer variable", "float twice(float x) { return 2 * x; }\nkernel void k(device float* o [[buffer(0)]]) { float (*fp)(float) = twice; o[0] = fp(1); }\n", nil, "4:54: a function pointer type is not available in Metal"},
		{"define backend name", "#define mtl_kernels evil\n", nil, "3:1: #define mtl_kernels: names beginning with mtl_ belong to the cpu backend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := vetSource(t, vetHeader+tt.src, tt.files)
			if len(got) == 0 {
				t.Fatalf("Vet = %v, want a refusal %q", err, tt.want)
			}
			if !strings.HasPrefix(got[0], tt.want) {
				t.Errorf("first refusal = %q, want %q\nall: %q", got[0], tt.want, got)
			}
		})
	}
}

func TestVetAllows(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		files map[string]string
	}{
		{"line splice between tokens (ggml)", "kernel void k(device float* o [[buffer(0)]], uint il [[thread_position_in_grid]]) {\n  uint m = (il/4)>1 ? ((il/4)>2 ? 192 : 48) : \\\n                                  ((il/4)>0 ? 12 : 3);\n  o[il] = m + \\\r\n 1;\n}\n", nil},
		{"metal internals (MLX, candle)", "template <typename T> struct __is_valid_simdgroup_type { static constexpr constant bool value = true; };\ninline float __metal_fabs(float x, bool) { return abs(x); }\n#define F(ctype) inline ctype myabs(ctype x) { return static_cast<ctype>(__metal_fabs(x, false)); }\nF(float)\n" +
			"template <typename T> constexpr constant bool is_simd_t = __is_valid_simdgroup_type<T>::value;\nkernel void k(device float* o [[buffer(0)]]) { o[0] = myabs(-1.0f) + is_simd_t<float>; }\n", nil},
		{"value parameter named like a pointer elsewhere (candle)", "template <typename T> inline T gelu(T x) { return static_cast<T>(x * 2); }\n" +
			"struct ugelu { template <typename T> T operator()(T x) { return static_cast<T>(gelu(x)); } };\n" +
			"kernel void k(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) { ugelu op; x[i] = op(x[i]); }\n", nil},
		{"predefined limits (ggml)", "kernel void k(device half* o [[buffer(0)]]) { o[0] = -__FLT16_MAX__/2 + __FLT_EPSILON__ + __INT_MAX__; }\n", nil},
		{"asm inside names", "kernel void k(device float* plasma [[buffer(0)]]) {\n  float asm_x = 1, basm = 2, asm_ = 3;\n  plasma[0] = asm_x + basm + asm_;\n}\n", nil},
		{"attribute in comment and string", "// __attribute__((constructor)) asm(\"x\") system(\"id\")\n/* __builtin_trap(); extern \"C\" */\nconstant char msg[] = \"__attribute__((constructor)) asm system()\";\nkernel void k() {}\n", nil},
		{"metal attributes", "struct P { float4 pos [[position]]; float c [[user(locn0)]]; };\n" +
			"[[kernel, max_total_threads_per_threadgroup(256)]] void k(\n  device float* o [[buffer(0)]],\n  constant uint& n [[buffer(1)]],\n  threadgroup float* tg [[threadgroup(0)]],\n" +
			"  uint3 gid [[thread_position_in_grid]], uint3 tid [[thread_position_in_threadgroup]],\n  uint li [[thread_index_in_threadgroup]], uint3 tg3 [[threadgroup_position_in_grid]],\n" +
			"  uint3 tpg [[threads_per_grid]], uint3 tptg [[threads_per_threadgroup]], uint3 tgpg [[threadgroups_per_grid]],\n" +
			"  ushort lane [[thread_index_in_simdgroup]], ushort sg [[simdgroup_index_in_threadgroup]], ushort nsg [[simdgroups_per_threadgroup]],\n" +
			"  ushort tes [[thread_execution_width]], ushort q [[thread_index_in_quadgroup]], ushort qg [[quadgroup_index_in_threadgroup]]) {\n" +
			"  [[maybe_unused]] int unused = 0;\n  if (n > 0) [[likely]] { o[gid.x] = tg[li]; }\n  switch (lane) { case 0: o[0] = 1; [[fallthrough]]; default: break; }\n}\n" +
			"[[nodiscard]] inline float g() { return 1; }\n", nil},
		{"gnu extension", "typedef struct { __extension__ union { half h; ushort u; }; } blk;\n[[clang::optnone]] inline float id(float x) { return x; }\nkernel void k(device float* o [[buffer(0)]]) { blk b; b.u = 0; o[0] = id(float(b.h)); }\n", nil},
		{"gnu always_inline", "#define METAL_FUNC inline __attribute__((always_inline))\nMETAL_FUNC float twice(float x) { return 2 * x; }\n[[gnu::always_inline]] inline float thrice(float x) { return 3 * x; }\n__attribute__((noinline, unused)) float once(float x) { return x; }\nkernel void k(device float* o [[buffer(0)]]) { o[0] = twice(1) + thrice(1) + once(1); }\n", nil},
		{"function-like macro", "#define SQR(x) ((x) * (x))\n#define CALL(f, ...) f(__VA_ARGS__)\n#define MAKE(name) float name(float v) { return SQR(v); }\nMAKE(square)\nkernel void k(device float* o [[buffer(0)]]) { o[0] = SQR(2.0f) + CALL(square, 3.0f) + CALL(max, 1.0f, 2.0f); }\n", nil},
		{"template function", "template <typename T, int N = 4>\nT sum(thread const T* v) { T s = 0; for (int i = 0; i < N; i++) s += v[i]; return s; }\nkernel void k(device float* o [[buffer(0)]]) { float v[4] = {1, 2, 3, 4}; o[0] = sum<float>(v) + sum<float, 4>(v); }\n", nil},
		{"struct constructor", "struct Acc { float s; Acc(float x) : s(x) {} Acc() : s{0} {} float get() const { return s; } };\nkernel void k(device float* o [[buffer(0)]]) { Acc a(1.0f); Acc b = Acc(2.0f); o[0] = a.get() + b.get() + Acc().get(); }\n", nil},
		{"lambda", "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  auto sq = [](float x) { return x * x; };\n  auto add = [&, i](float x) -> float { return x + float(i); };\n  auto [a, b] = int2(1, 2);\n  o[i] = sq(2) + add(1) + [](int x) { return x; }(3) + a + b;\n}\n", nil},
		{"function pointer template parameter", "template<typename block_q, short nl, void (*dequantize_func)(device const block_q *, short, thread float4x4 &)>\n" +
			"kernel void kernel_get_rows(device const void* src [[buffer(0)]], device float* dst [[buffer(1)]]) {\n  float4x4 temp;\n  dequantize_func((device const block_q *) src, 0, temp);\n  dst[0] = temp[0][0];\n}\n" +
			"struct block_q4_0 { half d; uchar qs[16]; };\n" +
			"void dequantize_q4_0(device const block_q4_0* x, short il, thread float4x4& reg) { reg = float4x4(float(x->d)); }\n" +
			"typedef decltype(kernel_get_rows<block_q4_0, 2, dequantize_q4_0>) get_rows_t;\n" +
			"template [[host_name(\"kernel_get_rows_q4_0\")]] kernel get_rows_t kernel_get_rows<block_q4_0, 2, dequantize_q4_0>;\n", nil},
		{"member calls", "struct V { float x; float get() const { return x; } float twice() const { return get() * 2; } };\nkernel void k(device float* o [[buffer(0)]]) { V v{1}; thread V* p = &v; o[0] = v.get() + p->twice() + v.template_free(); }\n", nil},
		{"metal qualified calls", "kernel void k(device float* o [[buffer(0)]]) {\n  o[0] = metal::exp(1.0f) + metal::precise::sqrt(2.0f) + metal::fast::exp2(1.0f) + precise::cos(0.0f);\n  o[1] = metal::numeric_limits<float>::max() + ::metal::abs(-1.0f);\n  metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);\n}\n", nil},
		{"declared later", "float helper(float x);\ntemplate <typename T> T twice(T x) { return later(x) * 2; }\nkernel void k(device float* o [[buffer(0)]]) { o[0] = helper(1) + twice(2.0f); }\nfloat helper(float x) { return later(x); }\ntemplate <typename T> T later(T x) { return x + 1; }\n", nil},
		{"operators", "struct C { float r, i; C operator+(C o) const { return {r + o.r, i + o.i}; } float operator()(int k) const { return k ? i : r; } float operator[](int k) const { return k ? i : r; } operator float() const { return r; } };\n" +
			"kernel void k(device float* o [[buffer(0)]]) { C a{1, 2}, b{3, 4}; C c = a.operator+(b); o[0] = c(1) + c[0] + float(c) + (a + b)(0); }\n", nil},
		{"operator declarations", "struct S { float v; S operator-() const; explicit operator bool() const { return v != 0; } };\ninline S operator*(S a, float b);\nbool operator==(S a, S b);\ninline S operator*(S a, float b) { return {a.v * b}; }\nkernel void k(device float* o [[buffer(0)]]) { S s{2}; o[0] = (s * 2.0f).v; }\n", nil},
		{"casts", "kernel void k(device float* o [[buffer(0)]], device const uint* in [[buffer(1)]]) {\n  o[0] = float(in[0]) + half(1.0h) + float4(1, 2, 3, 4).x + static_cast<float>(in[1]) + as_type<float>(in[2]);\n  o[1] = reinterpret_cast<device const float*>(in)[3] + uint8_t(3) + packed_float3(1).x + (float)sizeof(float4) + alignof(float);\n  o[2] = vec<float, 2>(1).y + select(0.0f, 1.0f, true) + bfloat(1.0f);\n}\n", nil},
		{"qualified source names", "namespace ops { template <typename T> struct add { static T apply(T a, T b) { return a + b; } }; enum class E { A, B }; }\n" +
			"struct S { static constexpr constant int N = 4; static float f(float x) { return x; } };\n" +
			"kernel void k(device float* o [[buffer(0)]]) { o[0] = ops::add<float>::apply(1, 2) + S::N + S::f(1) + float(ops::E::A == ops::E::B) + ::helper(); }\nfloat helper() { return 0; }\n", nil},
		{"using namespace metal", "namespace mine { constant int x = 1; }\nusing namespace mine;\nnamespace m = metal;\nkernel void k(device float* o [[buffer(0)]]) { o[0] = m::exp(0.0f) + x; }\n", nil},
		{"pragmas", "#pragma once\n#pragma METAL internals : enable\n#pragma clang diagnostic push\n#pragma clang diagnostic ignored \"-Wunused\"\n#pragma GCC diagnostic ignored \"-Wunused\"\n" +
			"kernel void k(device float* o [[buffer(0)]]) {\n#pragma unroll\n  for (int i = 0; i < 4; i++) o[i] = 0;\n#pragma unroll(2)\n  for (int i = 0; i < 4; i++) o[i] = 0;\n#pragma clang loop unroll(full)\n  for (int i = 0; i < 4; i++) o[i] = 0;\n" +
			"  _Pragma(\"unroll\") for (int i = 0; i < 4; i++) o[i] = 0;\n#pragma nounroll\n  for (int i = 0; i < 4; i++) o[i] = 0;\n}\n#pragma clang diagnostic pop\n", nil},
		{"program-scope constants", "constant float table[4] = {1, 2, 3, 4};\nconstexpr constant int N = 4;\nconstant bool has_b [[function_constant(0)]];\nconstant int n_b = has_b ? 2 : 1;\n" +
			"constant float4 v = float4(1, 2, 3, 4);\nconstexpr int sq(int x) { return x * x; }\nconstant int N2 = sq(N);\nconst int legacy = 3;\nstruct P { float a; int b; };\nconstant P p = {1.0f, 2};\n" +
			"constant float e = metal::exp(1.0f);\ntemplate <typename T> constant T zero = T(0);\nkernel void k(device float* o [[buffer(0)]]) { o[0] = table[N - 1] + n_b + v.x + N2 + legacy + p.a + e + zero<float>; }\n", nil},
		{"deleted functions", "struct S { S() = default; S(const thread S&) = delete; };\nkernel void k() { S s; }\n", nil},
		{"predefined macros", "#if defined(__METAL_VERSION__) && __METAL_VERSION__ >= 300\n#define V3 1\n#endif\n#ifdef __METAL_MACOS__\n#endif\n#ifdef __HAVE_SIMDGROUP_MATRIX__\n#endif\n" +
			"#define LOG(...) log_line(__LINE__, __FILE__, __VA_ARGS__)\nvoid log_line(int l, constant char* f, int x) {}\nkernel void k() { LOG(1); (void)__COUNTER__; }\n#ifdef __cplusplus\n#endif\n", nil},
		{"includes", "#include <metal_stdlib>\n#include <metal_math>\n#include <metal_simdgroup_matrix>\n#include <simd/simd.h>\n#include \"common.h\"\n#include \"sub/deep.h\"\n" +
			"kernel void k(device float* o [[buffer(0)]]) { o[0] = common_f(1) + deep_f(2); }\n",
			map[string]string{"common.h": "#pragma once\ninline float common_f(float x) { return x; }\n", "sub/deep.h": "#include \"../common.h\"\n#include \"leaf.h\"\ninline float deep_f(float x) { return common_f(x) + leaf_f(x); }\n", "sub/leaf.h": "inline float leaf_f(float x) { return x; }\n"}},
		{"host include in an inactive branch", "#if defined(GGML_COMMON_DECL_C)\n#include <stdint.h>\ntypedef uint16_t ggml_half;\n#elif defined(__cplusplus)\ntypedef half ggml_half;\n#endif\n#ifndef __cplusplus\n#define static_assert(c, m) _Static_assert(c, m)\n#endif\nkernel void k() { ggml_half h = 0; }\n", nil},
		{"prose in if 0", "#if 0\nWe don't try to delete or throw anything new here: a virtual goto is fine in prose.\n#endif\nkernel void k() {}\n", nil},
		{"undecided branches", "#ifdef __METAL_VERSION__\n#define F(x) metal::exp(x)\n#else\n#define F(x) exp(x)\n#endif\nkernel void k(device float* o [[buffer(0)]]) { o[0] = F(1.0f); }\n", nil},
		{"macros defined in includes", "#include \"m.h\"\nkernel void k(device float* o [[buffer(0)]]) { FOR_UNROLL(int i = 0; i < 4; ++i) { o[i] = TWICE(o[i]); } }\n",
			map[string]string{"m.h": "#define FOR_UNROLL(x) _Pragma(\"clang loop unroll(full)\") for (x)\n#define TWICE(x) ((x) * 2)\n"}},
		{"labels and case", "kernel void k(device int* o [[buffer(0)]]) { switch (o[0]) { case 1: o[1] = 2; break; default: break; } }\n", nil},
		{"enums", "enum Mode { ModeA, ModeB = 3 };\nenum class Kind : int { X, Y };\nkernel void k(device int* o [[buffer(0)]]) { o[0] = ModeB + int(Kind::Y); }\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := vetSource(t, vetHeader+tt.src, tt.files)
			if err != nil {
				t.Errorf("Vet refused a valid kernel:\n%s", strings.Join(got, "\n"))
				if got == nil {
					t.Error(err)
				}
			}
		})
	}
}
