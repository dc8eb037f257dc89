package translate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"metalab/backend"
	"metalab/internal/testenv"
	"metalab/translate"
	"metalab/translate/cpp"
)

// benchSources are the largest bundled kernel and the library-style
// examples with headers, each with one entry point.
var benchSources = []struct {
	file, entry string
	includes    []string
}{
	{"../kernels/qsa_prompt.metal", "qsa_flash", nil},
	{"../kernels/examples/ggml/ggml-ops.metal", "kernel_mul_mv_q4_0_f32", []string{"../kernels/examples/ggml/include"}},
	{"../kernels/examples/mlx/kernels.metal", "gemv_float32_bm4_tm4", []string{"../kernels/examples/mlx/include"}},
}

// BenchmarkPreprocess measures the compiler's preprocessor over a source
// (a process per run: the Preprocessor's kept results are bypassed).
func BenchmarkPreprocess(b *testing.B) {
	pp := &translate.Preprocessor{CXX: testenv.RequireCXX(b)}
	for _, s := range benchSources {
		text, err := os.ReadFile(s.file)
		if err != nil {
			b.Fatal(err)
		}
		src := backend.Source{Name: s.file, Text: text, Dir: filepath.Dir(s.file), IncludeDirs: s.includes, Entry: s.entry}
		b.Run(filepath.Base(s.file), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := pp.Preprocess(context.Background(), src, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTranslate measures the translation of a preprocessed source:
// parsing, what the entry reaches, the rewrites and the writing.
func BenchmarkTranslate(b *testing.B) {
	pp := &translate.Preprocessor{CXX: testenv.RequireCXX(b)}
	for _, s := range benchSources {
		text, err := os.ReadFile(s.file)
		if err != nil {
			b.Fatal(err)
		}
		src := backend.Source{Name: s.file, Text: text, Dir: filepath.Dir(s.file), IncludeDirs: s.includes, Entry: s.entry}
		pre, err := pp.Preprocess(context.Background(), src, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(s.file), func(b *testing.B) {
			b.SetBytes(int64(len(pre.Text)))
			for i := 0; i < b.N; i++ {
				if _, err := translate.TranslatePreprocessed(pre, src, cpp.Target); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTranslateAll is Translate as the cpu backend calls it: vetting,
// the preprocessor (kept results bypassed) and the translation.
func BenchmarkTranslateAll(b *testing.B) {
	cxx := testenv.RequireCXX(b)
	for _, s := range benchSources {
		text, err := os.ReadFile(s.file)
		if err != nil {
			b.Fatal(err)
		}
		src := backend.Source{Name: s.file, Text: text, Dir: filepath.Dir(s.file), IncludeDirs: s.includes, Entry: s.entry}
		b.Run(filepath.Base(s.file), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				pp := &translate.Preprocessor{CXX: cxx}
				if _, err := translate.Translate(context.Background(), src, translate.Options{Target: cpp.Target, Preprocessor: pp}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
