package cpp_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"metalab/internal/testenv"
	"metalab/translate/cpp"
	"metalab/translate/translatetest"
)

// TestGolden translates the kernels of ../testdata/golden/*.txtar and
// compiles each translation against the prelude.
func TestGolden(t *testing.T) {
	translatetest.Run(t, "../testdata/golden", cpp.Target, "want.cpp", func(t *testing.T, c *translatetest.Case) {
		if out, err := syntaxCheck(t, c.Unit.Text); err != nil {
			t.Errorf("the translation does not compile: %v\n%s", err, out)
		}
	})
}

// syntaxCheck compiles a translation unit with -fsyntax-only against the
// cpu backend's prelude and runtime header.
func syntaxCheck(t *testing.T, tu []byte) ([]byte, error) {
	t.Helper()
	cxx := testenv.RequireCXX(t)
	prelude, _ := filepath.Abs("../../backend/cpu/prelude")
	runtime, _ := filepath.Abs("../../backend/cpu/runtime")
	if _, err := os.Stat(filepath.Join(prelude, "metal_stdlib")); err != nil {
		t.Fatalf("prelude not present: %v", err)
	}
	cmd := testenv.Command(cxx, "-std=c++17", "-fsyntax-only", "-ffp-contract=off", "-I", prelude, "-I", runtime, "-x", "c++", "-")
	cmd.Stdin = bytes.NewReader(tu)
	return cmd.CombinedOutput()
}
