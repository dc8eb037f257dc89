package cuda_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"metalab/translate/cuda"
	"metalab/translate/translatetest"
)

// TestGolden translates the kernels of ../testdata/golden/*.txtar for
// CUDA. With nvcc on the path (and METALAB_CUDA_PRELUDE naming a
// directory holding the CUDA prelude's metal_stdlib) each translation is
// also compiled with nvcc -x cu -c; without them the translation is held
// to its golden only.
func TestGolden(t *testing.T) {
	nvcc, err := exec.LookPath("nvcc")
	prelude := os.Getenv("METALAB_CUDA_PRELUDE")
	var check func(t *testing.T, c *translatetest.Case)
	if err == nil && prelude != "" {
		check = func(t *testing.T, c *translatetest.Case) {
			src := filepath.Join(c.Dir, "tu.cu")
			if err := os.WriteFile(src, c.Unit.Text, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(nvcc, "-std=c++17", "-x", "cu", "-c", "-I", prelude, "-o", filepath.Join(c.Dir, "tu.o"), src).CombinedOutput()
			if err != nil {
				t.Errorf("nvcc: %v\n%s", err, out)
			}
		}
	}
	translatetest.Run(t, "../testdata/golden", cuda.Target, "want.cu", check)
}
