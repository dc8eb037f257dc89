package translate_test

import (
	"strings"
	"testing"

	"metalab/backend"
	"metalab/translate"
)

// translateKernel translates src, a file k.metal with entry k, for the C++
// target.
func translateKernel(t *testing.T, src string) *translate.Unit {
	t.Helper()
	u, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// compiles fails t unless u compiles against the cpu backend's prelude.
func compiles(t *testing.T, u *translate.Unit) {
	t.Helper()
	if out, err := syntaxCheck(t, u.Text); err != nil {
		t.Errorf("the translation does not compile: %v\n%s\n%s", err, out, u.Text)
	}
}

// TestRangeDesignators: the GNU range and element designators of a local
// array (ggml's flash attention: float S[NQ] = { [0 ... NQ-1] = 0.0f }),
// which g++ and nvcc refuse in C++, become a value-initialised array and
// assignments in source order; a const array or a value with effects is
// left as written, for the compiler to refuse with its position.
func TestRangeDesignators(t *testing.T) {
	src := header + "template <short NQ>\nvoid f(device float* o, uint i) {\n" +
		"  float S[NQ] = { [0 ... NQ-1] = 0.0f };\n" +
		"  float M[NQ] = { [0 ... NQ-1] = -FLT_MAX/2, [1] = (float)2 };\n" +
		"  o[i] = S[i % NQ] + M[i % NQ];\n}\n" +
		"kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { f<4>(o, i); }\n"
	u := translateKernel(t, src)
	text := string(u.Text)
	for _, want := range []string{
		"S[NQ] = {}; for (int mtl_rd = 0; mtl_rd <= NQ - 1; ++mtl_rd) S[mtl_rd] = 0.0f;",
		"M[NQ] = {}; for (int mtl_rd = 0; mtl_rd <= NQ - 1; ++mtl_rd) M[mtl_rd] = - FLT_MAX / 2; M[1] = ( float ) 2;",
	} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("the translation lacks %q:\n%s", want, text)
		}
	}
	compiles(t, u)
	for _, kept := range []string{
		"  const float C[4] = { [0 ... 3] = 1.0f };\n",
		"  int n = 0; float C[4] = { [0 ... 3] = float(n++) };\n",
	} {
		src := header + "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n" + kept + "  o[i] = C[i % 4];\n}\n"
		u := translateKernel(t, src)
		if !strings.Contains(string(u.Text), "...") {
			t.Errorf("%q was lowered:\n%s", kept, u.Text)
		}
	}
}

// TestArrayParameter: a kernel's array parameter (MLX's convolutions:
// constant const IdxT strides[3], bound to the next buffer index) is a
// pointer, as in C++: the wrapper casts its buffer to the element's
// pointer type.
func TestArrayParameter(t *testing.T) {
	src := header + "kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],\n" +
		"  constant const int strides[3], constant const int& n, uint i [[thread_position_in_grid]]) {\n" +
		"  out[i] = in[i * strides[0] % n] + strides[2];\n}\n"
	u := translateKernel(t, src)
	if !strings.Contains(string(u.Text), "static_cast<const int *>(mtl_b[2])") && !strings.Contains(string(u.Text), "static_cast<const int*>(mtl_b[2])") {
		t.Errorf("the array parameter is not cast to a pointer:\n%s", u.Text)
	}
	compiles(t, u)
}

// TestAnonMemberOperators: a half member of an anonymous struct in an
// anonymous union (ggml's block formats) takes part in arithmetic (q4_1's
// xb->d / 16.h) and its address is a pointer to half (q2_K's &x[ib].d).
func TestAnonMemberOperators(t *testing.T) {
	src := header + "typedef struct { union { struct { half d; half m; }; half2 dm; }; uchar qs[16]; } block;\n" +
		"kernel void k(device const block* x [[buffer(0)]], device float* o [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n" +
		"  device const block* xb = x + i;\n  device const half* dh = &xb->d;\n" +
		"  o[i] = xb->d / 16.h + 2.0f * xb->m - dh[1];\n}\n"
	u := translateKernel(t, src)
	if !strings.Contains(string(u.Text), "mtl_anon") {
		t.Fatalf("the members were not wrapped:\n%s", u.Text)
	}
	compiles(t, u)
}
