package prelude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/testenv"
)

// syntaxCheck compiles src with -fsyntax-only and returns the compiler
// output and whether it compiled.
func syntaxCheck(t *testing.T, src string) (string, bool) {
	t.Helper()
	gxx := needGXX(t)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "x.cpp")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, cxxFlags...), "-fsyntax-only", "-Wall", "-Wextra", "-I", here, "-I", runtimeDir(t), file)
	out, err := testenv.Command(gxx, args...).CombinedOutput()
	return string(out), err == nil
}

func TestMetalIdiomsCompile(t *testing.T) {
	out, ok := syntaxCheck(t, readTestdata(t, "idioms.cpp"))
	if !ok {
		t.Fatalf("idioms.cpp does not compile:\n%s", out)
	}
	if strings.Contains(out, "warning") {
		t.Errorf("warnings:\n%s", out)
	}
}

// TestMetalErrorsStayErrors checks code Metal rejects is rejected here too,
// so a variant cannot pass on the cpu backend by relying on the emulation.
func TestMetalErrorsStayErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"repeated swizzle write", "float4 v = 0.0f; v.xx() = float2(1, 2);", "repeated components"},
		{"swizzle past the end", "float2 v = 0.0f; float3 w = v.xyz(); (void)w;", "no member named"},
		{"as_type size", "float4 v = 0.0f; uint u = as_type<uint>(v); (void)u;", "sizes differ"},
		{"implicit vector conversion", "int4 i = 1; float4 f = i; (void)f;", "conversion"},
		{"mixed element vector op", "int4 i = 1; float4 f = 1.0f; auto g = f + i; (void)g;", "operator+"},
		{"wrong component count", "float4 v = float4(1.0f, 2.0f, 3.0f); (void)v;", "float4"},
		{"excess braced scalars", "constexpr float2 v = {1.0f, 2.0f, 3.0f}; (void)v;", "excess_initializers"},
		{"braced vector and too few", "float2 a = 0.0f; float4 v = {a, 1.0f}; (void)v;", "float4"},
		{"simdgroup matrix size", "simdgroup_matrix<float, 16, 16> m; (void)m;", "8x8"},
		{"simdgroup matrix element", "simdgroup_matrix<int, 8, 8> m; (void)m;", "float, half or bfloat"},
		{"erf is not Metal", "float y = erf(0.5f); (void)y;", "erf"},
		{"vector sizes differ", "float4 a = 0.0f; float2 b = 0.0f; auto c = fmax(a, b); (void)c;", "fmax"},
		{"vector element types differ", "float4 a = 0.0f; half4 b = 0.0f; auto c = clamp(a, b, a); (void)c;", "clamp"},
		{"vec_elements of a struct", "struct S {}; int n = vec_elements<S>::value; (void)n;", "value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "#include <metal_stdlib>\nusing namespace metal;\nvoid f() { " + c.body + " }\n"
			out, ok := syntaxCheck(t, src)
			if ok {
				t.Fatalf("compiled, want an error")
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("error does not mention %q:\n%s", c.want, out)
			}
		})
	}
}

// TestLibmCallsAreNotFolded checks that a math function of a constant is
// still a libm call, so it gives the bits the same call gives at run time.
func TestLibmCallsAreNotFolded(t *testing.T) {
	gxx := needGXX(t)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "c.cpp")
	src := "#include <metal_stdlib>\nfloat f() { return metal::sin(0.5f) + metal::exp(1.5f) + metal::pow(2.0f, 0.3f); }\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	asm := filepath.Join(dir, "c.s")
	args := append(append([]string{}, cxxFlags...), "-S", "-I", here, "-I", runtimeDir(t), "-o", asm, file)
	if out, err := testenv.Command(gxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	b, err := os.ReadFile(asm)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"sinf", "expf", "powf"} {
		if !strings.Contains(string(b), fn) {
			t.Errorf("%s of a constant was folded at compile time", fn)
		}
	}
}

// TestBarrierMacroLeavesRuntimeCalls checks that the prelude's
// threadgroup_barrier macro, which adds the call site to Metal's calls,
// leaves the runtime's argument-less threadgroup_barrier() alone: the
// backend compiles every translation unit with the prelude precompiled,
// including code that calls the runtime directly.
func TestBarrierMacroLeavesRuntimeCalls(t *testing.T) {
	src := `#include <metal_stdlib>
#include "mtl_rt.h"
void rt() {
  using namespace mtl_rt;
  threadgroup_barrier();
  mtl_rt::threadgroup_barrier();
}
void kernel_code() {
  using namespace metal;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  metal::threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
}
`
	out, ok := syntaxCheck(t, src)
	if !ok || strings.Contains(out, "warning") {
		t.Errorf("compiled %v, output:\n%s", ok, out)
	}
}
