package prelude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/testenv"
)

// attrSource marks functions the ways kernels written for Apple's compiler
// do: clang's scoped attributes and MLX's METAL_FUNC (a GNU attribute).
const attrSource = `#include <metal_stdlib>
using namespace metal;
#define METAL_FUNC inline __attribute__((always_inline))
[[clang::always_inline]] inline float f(float x) { return x + 1.0f; }
[[clang::noinline]] float g(float x) { return x * 2.0f; }
[[clang::optnone]] float h(float x) { return x; }
METAL_FUNC float k(float x) { return x; }
__attribute__((noinline, unused)) static float u(float x) { return x; }
struct __attribute__((aligned(16))) A { float x; };
float use(float x) { return f(x) + g(x) + h(x) + k(x) + A{x}.x; }
`

// TestClangAttributesAccepted checks that clang's scoped attributes compile
// without a warning, both when the prelude is parsed from source and when
// it comes from a precompiled header (as the backend builds kernels):
// GCC drops the ignored-attributes pragma from a precompiled header, so
// metal_stdlib must repeat it when included again.
func TestClangAttributesAccepted(t *testing.T) {
	gxx := needGXX(t)
	if out, ok := syntaxCheck(t, "#if defined(__clang__) || !defined(__GNUC__) || __GNUC__ < 12\n#error no ignored_attributes pragma\n#endif\n"); !ok {
		t.Skipf("the compiler is not GCC 12 or later, which has no ignored_attributes pragma: %s", out)
	}
	out, ok := syntaxCheck(t, attrSource)
	if !ok || strings.Contains(out, "warning") {
		t.Errorf("from source: compiled %v, output:\n%s", ok, out)
	}

	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hdr := filepath.Join(dir, "metal_pch.h")
	if err := os.WriteFile(hdr, []byte("#include <metal_stdlib>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inc := []string{"-I", here, "-I", runtimeDir(t)}
	args := append(append(append([]string{}, cxxFlags...), inc...), "-x", "c++-header", hdr, "-o", hdr+".gch")
	if b, err := testenv.Command(gxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("precompile: %v\n%s", err, b)
	}
	src := filepath.Join(dir, "k.cpp")
	if err := os.WriteFile(src, []byte(attrSource), 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(append(append([]string{}, cxxFlags...), inc...), "-Wall", "-Wextra", "-Winvalid-pch", "-include", hdr, "-c", "-o", filepath.Join(dir, "k.o"), src)
	b, err := testenv.Command(gxx, args...).CombinedOutput()
	if err != nil || strings.Contains(string(b), "warning") {
		t.Errorf("with a precompiled prelude: %v, output:\n%s", err, b)
	}
}

// TestGlobalTypeNames checks that Metal's built-in type names work before
// `using namespace metal;`, as ggml's common header uses them, and that
// both spellings name the same types afterwards.
func TestGlobalTypeNames(t *testing.T) {
	src := `#include <metal_stdlib>
typedef half ggml_half;
typedef half2 ggml_half2;
typedef struct { ggml_half d; uint8_t qs[16]; } block_q4_0;
static_assert(sizeof(block_q4_0) == 18, "block layout");
struct Args { float4 a; uint2 b; packed_half3 c; float4x4 m; half2x2 hm; bfloat4 bv; ulong u; uchar4 cv; };
using namespace metal;
static_assert(metal::is_same_v<half, metal::half> && metal::is_same_v<::float4, metal::float4>, "same types");
static_assert(metal::is_same_v<uint, unsigned int> && metal::is_same_v<half4x4, metal::matrix<metal::half, 4, 4>>, "same types");
half f(block_q4_0 b, Args a) { return b.d + half(a.a.x) + a.hm[0][1]; }
`
	out, ok := syntaxCheck(t, src)
	if !ok || strings.Contains(out, "warning") {
		t.Errorf("compiled %v, output:\n%s", ok, out)
	}
}
