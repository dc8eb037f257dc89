package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"metalab/backend"
	"metalab/msl"
)

// TestRepoKernels compiles every non-template kernel of the repository's
// kernels/*.metal with the cpu backend, so a prelude or translator change
// that breaks a real kernel fails here, and checks each one's static
// threadgroup memory against msl's estimate (compile does).
func TestRepoKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles every kernel of kernels/")
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "kernels", "*.metal"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no kernels/*.metal found in ../../../kernels: the bundled kernels moved or the glob is wrong")
	}
	b := newBackend(t)
	for _, path := range files {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		f, err := msl.Parse(name, text)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		dir, _ := filepath.Abs(filepath.Dir(path))
		for _, fn := range f.Funcs {
			if fn.Kind != msl.Kernel || fn.Template != nil || fn.Body == nil {
				continue
			}
			t.Run(name+"/"+fn.Name, func(t *testing.T) {
				compile(t, b, backend.Source{Name: name, Text: text, Dir: dir, Entry: fn.Name})
			})
		}
	}
}
