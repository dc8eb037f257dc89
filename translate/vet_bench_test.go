package translate

import (
	"os"
	"path/filepath"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/prelude"
)

// BenchmarkVet vets the largest bundled kernel and the library-style ones;
// the prelude scan is done once before the timer starts.
func BenchmarkVet(b *testing.B) {
	preludeNames()
	for _, p := range []string{
		filepath.Join("..", "kernels", "qsa_prompt.metal"),
		filepath.Join("testdata", "vet", "ggml_style.metal"),
		filepath.Join("testdata", "vet", "mlx_style.metal"),
	} {
		text, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		src := backend.Source{Name: filepath.Base(p), Text: text, Dir: filepath.Dir(p)}
		b.Run(filepath.Base(p), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				if err := Vet(src, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPreludeScan measures the one-time scan of metal_stdlib that the
// first Vet of a process pays.
func BenchmarkPreludeScan(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if n, _ := scanPrelude(prelude.FS); len(n) < 300 {
			b.Fatalf("scan found %d names", len(n))
		}
	}
}
