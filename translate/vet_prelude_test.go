package translate

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"metalab/backend/cpu/prelude"
	"metalab/internal/testenv"
)

// braceExpand expands the shell-style alternatives of the prelude's README
// (simd_prefix_{inclusive,exclusive}_sum).
func braceExpand(s string) []string {
	i := strings.IndexByte(s, '{')
	j := strings.IndexByte(s, '}')
	if i < 0 || j < i {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[i+1:j], ",") {
		out = append(out, braceExpand(s[:i]+alt+s[j+1:])...)
	}
	return out
}

// TestPreludeNamesHidden: the scan leaves out the host's and the backend's
// names, so that calling them is refused.
func TestPreludeNamesHidden(t *testing.T) {
	provided := preludeNames()
	for name := range hostFunctions {
		if provided[name] != 0 {
			t.Errorf("the prelude scan provides the C library's %s", name)
		}
	}
	for name := range provided {
		if name == "std" || backendName(name) || strings.HasPrefix(name, "__") && !metalInternal(name) {
			t.Errorf("the prelude scan provides %s", name)
		}
	}
	for _, name := range []string{"float4", "half", "simd_sum", "threadgroup_barrier", "mem_flags", "as_type", "metal", "precise", "simd", "M_PI_F", "INFINITY", "atomic_fetch_add_explicit", "simdgroup_multiply_accumulate"} {
		if provided[name] == 0 {
			t.Errorf("the prelude scan does not provide %s", name)
		}
	}
}

// TestPreludeDeclaresNoHostFunction checks, with the C++ compiler, the
// assumption the call rule rests on: once the prelude is included, none of
// the C library's functions is declared, so a kernel can reach one only
// through what Vet refuses (extern "C", asm labels, builtins, includes).
func TestPreludeDeclaresNoHostFunction(t *testing.T) {
	cxx := testenv.RequireCXX(t)
	dir := t.TempDir()
	if err := prelude.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	rt, err := os.ReadFile(filepath.Join("..", "backend", "cpu", "runtime", "mtl_rt.h"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"mtl_rt.h": string(rt), "tu.cpp": "#include <metal_stdlib>\n#include <simd/simd.h>\n"})
	out, err := testenv.Command(cxx, "-std=c++17", "-E", "-P", "-I"+dir, filepath.Join(dir, "tu.cpp")).Output()
	if err != nil {
		t.Fatalf("%s -E: %v", cxx[0], err)
	}
	if len(out) < 10000 {
		t.Fatalf("preprocessed prelude is only %d bytes", len(out))
	}
	for name := range hostFunctions {
		if regexp.MustCompile(`\b` + name + `\s*\(`).Match(out) {
			t.Errorf("the preprocessed prelude mentions %s(: a kernel could call the C library's %s", name, name)
		}
	}
}
