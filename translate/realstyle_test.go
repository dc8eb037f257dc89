package translate_test

import (
	"testing"

	"metalab/backend"
)

// TestRealStyleCompiles translates kernels written as the public projects
// write them and compiles the result: a constant-qualified constructor
// (MLX's complex_t), a static constexpr member spelled with constant, a
// free operator used only by a static_assert at file scope.
func TestRealStyleCompiles(t *testing.T) {
	tests := []struct{ name, src string }{
		{"constant constructor", header + "struct complex_t {\n  float real, imag;\n  constexpr complex_t(float r, float i) : real(r), imag(i) {}\n" +
			"  template <typename U> constexpr complex_t(U x) constant : real(x), imag(0) {}\n  template <typename U> constexpr complex_t(U x) device : real(x), imag(0) {}\n" +
			"  float norm() constant { return real * real + imag * imag; }\n};\n" +
			"constant complex_t unit = complex_t(1.0f, 0.0f);\n" +
			"kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { complex_t c(2); o[i] = c.real + unit.norm(); }\n"},
		{"constructor repeated for threadgroup (candle)", header + "template <typename T> struct MD {\n  T m;\n  float d;\n  constexpr MD<T>() = default;\n  constexpr MD<T>() threadgroup = default;\n};\n" +
			"kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_threadgroup]]) {\n  threadgroup MD<half> s[32];\n  MD<half> v;\n  v.m = 1; v.d = 2;\n  s[i] = v;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  o[i] = s[i].d;\n}\n"},
		{"metal internals (candle)", header + "template <typename T> struct indexed { uint i; T val; };\n" +
			"template <typename T> struct _numeric_limits_impl<indexed<T>> { static constexpr indexed<T> lowest() { return indexed<T>{0, numeric_limits<T>::lowest()}; } };\n" +
			"template <typename T> constexpr constant bool is_simd_t = __is_valid_simdgroup_type<T>::value;\n" +
			"METAL_FUNC float twice(float x) { return 2 * x; }\n" +
			"kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = twice(numeric_limits<indexed<float>>::lowest().val) + is_simd_t<float4> + is_simd_t<bool>; }\n"},
		{"half in an anonymous struct of an anonymous union (ggml)", header + "typedef half ggml_half;\ntypedef half2 ggml_half2;\n" +
			"typedef struct {\n  union {\n    struct {\n      ggml_half d;\n      ggml_half m;\n    };\n    ggml_half2 dm;\n  };\n  uint8_t qs[16];\n} block_q4_1;\n" +
			"static_assert(sizeof(block_q4_1) == 2 * sizeof(ggml_half) + 16, \"wrong q4_1 block size/padding\");\n" +
			"kernel void k(device const block_q4_1* x [[buffer(0)]], device float* o [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n" +
			"  const float d = x[i].d;\n  half m = x[i].m;\n  block_q4_1 b = x[i];\n  b.d = half(2.0f);\n  half bd = b.d;\n  o[i] = d + float(m) + float(bd) + float(x[i].dm.x);\n}\n"},
		{"member specialisation at class scope (MLX)", header + "template <typename T> struct Limits { static const constant T max = 0; };\ntemplate <> struct Limits<float> { static const constant float max = 1; };\n" +
			"struct FloorDivide {\n  template <typename T> T operator()(T x, T y) thread { return floor(x / y); }\n  template <>\n  int operator()(int x, int y) thread { return x / y; }\n};\n" +
			"kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = FloorDivide()(3.0f, 2.0f) + FloorDivide()(7, 2) + Limits<float>::max; }\n"},
		{"static constexpr constant member", header + "struct P { static constexpr int constant n = 4; static constexpr constant short m = 2; };\n" +
			"kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = P::n * P::m; }\n"},
		{"operator for a static_assert", header + "struct C { float r, i; };\nconstexpr bool operator==(C a, C b) { return a.r == b.r && a.i == b.i; }\n" +
			"static_assert(C{1, 0} == C{1, 0}, \"equal\");\n" +
			"kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1; }\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(tt.src), Entry: "k", Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if out, err := syntaxCheck(t, u.Text); err != nil {
				t.Errorf("g++: %v\n%s\n%s", err, out, u.Text)
			}
		})
	}
}
