package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/msl"
)

// FuzzVet checks that vetting any input ends in nil, a refusal or a
// positioned error, never in a panic (Vet turns one into "vetting failed"),
// and that for any input msl lexes the vetting pass's directive finder and
// msl agree on where the directives are.
func FuzzVet(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "vet", "*.metal"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		vetHeader + "kernel void k() { asm(\"nop\"); }\n",
		"#define P(a, b) a##b\nP(_, _builtin_trap)();\n#if -1 > 0u\n#endif\n",
		"template <typename T, void (*f)(T)> struct S { static inline int x = g(); };\n",
		"[[gnu::x, clang::y(1, \"z\")]] __attribute__((a(b), c)) _Pragma(\"GCC x\") std::y ::z",
		"#if (\n#elif\n#else\n#endif\n#endif\n#if\n",
		"struct { } s = { [] { }() }; namespace = ; using namespace ; :: :: <:%:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		err := Vet(backend.Source{Name: "f.metal", Text: []byte(src)}, nil)
		if err != nil && strings.Contains(err.Error(), "cannot tell") {
			if _, lerr := msl.Lex("f.metal", []byte(src)); lerr == nil {
				t.Fatal(err)
			}
		}
		if err != nil && strings.Contains(err.Error(), "vetting failed") {
			t.Fatal(err)
		}
	})
}
