package cuda_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
	cudabackend "metalab/backend/cuda"
	"metalab/internal/testenv"
	"metalab/translate"
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

// TestLaunchBounds holds the entry's __launch_bounds__ to the threadgroups
// it is dispatched with: none at 256 threads or fewer, the dispatch's size
// above that (MLX's block kernels run 1024 threads, which an unbounded
// build may not launch), and the kernel's own
// [[max_total_threads_per_threadgroup]] wherever it declares one.
func TestLaunchBounds(t *testing.T) {
	cxx := testenv.RequireCXX(t)
	pp := &translate.Preprocessor{CXX: cxx}
	const plain = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1; }\n"
	const declared = "#include <metal_stdlib>\nusing namespace metal;\n[[kernel, max_total_threads_per_threadgroup(512)]] void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1; }\n"
	for _, tt := range []struct {
		name, text string
		threads    int
		want       string // the entry line's start; "MTL_CUDA_KERNEL(" for none
	}{
		{"unknown", plain, 0, "MTL_CUDA_KERNEL(0,"},
		{"small", plain, 256, "MTL_CUDA_KERNEL(0,"},
		{"large", plain, 1024, "MTL_CUDA_KERNEL_BOUNDED(0, "},
		{"declared", declared, 0, "MTL_CUDA_KERNEL_BOUNDED(0, "},
		{"declared beats dispatch", declared, 1024, "MTL_CUDA_KERNEL_BOUNDED(0, "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, err := translate.Translate(context.Background(), backend.Source{Name: "k.metal", Text: []byte(tt.text), Entry: "k", MaxThreads: tt.threads},
				translate.Options{Target: cuda.Target, Preprocessor: pp})
			if err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.Split(string(u.Text), "\n") {
				if strings.HasPrefix(l, "MTL_CUDA_KERNEL(") || strings.HasPrefix(l, "MTL_CUDA_KERNEL_BOUNDED(") {
					line = l
				}
			}
			if !strings.HasPrefix(line, tt.want) {
				t.Fatalf("entry %q, want it to start %q", line, tt.want)
			}
			want := map[string]string{"large": ", 1024)", "declared": ", 512)", "declared beats dispatch": ", 512)"}[tt.name]
			if want != "" && !strings.HasSuffix(line, want) {
				t.Errorf("entry %q, want the bound %q", line, want)
			}
		})
	}
}
