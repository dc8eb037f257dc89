package translate

import (
	"os"
	"path/filepath"
	"testing"

	"metalab/backend"
)

// TestVetLibraryStyle vets the kernels of testdata/vet, written the way
// llama.cpp's ggml and Apple's MLX write theirs: none may be refused.
func TestVetLibraryStyle(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "vet", "*.metal"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("library-style kernels: %v (%d found)", err, len(paths))
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		err = Vet(backend.Source{Name: filepath.Base(p), Text: b, Dir: filepath.Dir(p)}, nil)
		if err != nil {
			t.Errorf("%s refused:\n%v", p, err)
		}
	}
}
