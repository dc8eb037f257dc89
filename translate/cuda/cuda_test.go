package cuda_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"metalab/backend"
	cudabackend "metalab/backend/cuda"
	"metalab/internal/testenv"
	"metalab/translate/cuda"
	"metalab/translate/translatetest"
)

// TestGolden translates the kernels of ../testdata/golden/*.txtar for
// CUDA and holds each translation to its want.cu section.
func TestGolden(t *testing.T) {
	translatetest.Run(t, "../testdata/golden", cuda.Target, "want.cu", nil)
}

// arch is the architecture the goldens are compiled for: the GPU
// machine's (an H200) unless $METALAB_CUDA_ARCH says otherwise.
func arch() string {
	if a := os.Getenv("METALAB_CUDA_ARCH"); a != "" {
		return a
	}
	return "sm_90"
}

// TestGoldenCompiles compiles every successful translation of the goldens
// with nvcc, through the cuda backend's build (its flags, the runtime
// headers and the prelude, its compile cache), into a shared object: the
// target's output is what the runtime's ABI accepts. Without nvcc it
// skips, under CI as well (testenv.RequireNVCC).
func TestGoldenCompiles(t *testing.T) {
	nvcc := testenv.RequireNVCC(t)
	b := cudabackend.New(cudabackend.Options{NVCC: nvcc, CacheDir: filepath.Join(os.TempDir(), "metalab-cuda-test-cache")})
	defer b.Close()
	translatetest.Run(t, "../testdata/golden", cuda.Target, "want.cu", func(t *testing.T, c *translatetest.Case) {
		src := cudabackend.CUSource{Name: c.Name, CU: c.Unit.Text, Kernel: c.Unit.Entry}
		if _, err := b.BuildCU(context.Background(), src, arch()); err != nil {
			var f *backend.Failure
			if errors.As(err, &f) {
				t.Fatalf("nvcc: %s\n%s", f.Msg, f.Log)
			}
			t.Fatalf("nvcc: %v", err)
		}
	})
}
