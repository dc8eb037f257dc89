package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestTuneExampleCopies keeps the copies of kernels/examples/tune that
// cmd/metalab's sweep-cpu-tune.txtar sweeps identical to the bundled
// files: the end-to-end test sweeps the kernel the repository ships.
func TestTuneExampleCopies(t *testing.T) {
	a, err := txtar.ParseFile("../cmd/metalab/testdata/script/sweep-cpu-tune.txtar")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range a.Files {
		name, ok := strings.CutPrefix(f.Name, "kernels/examples/tune/")
		if !ok {
			continue
		}
		n++
		want, err := os.ReadFile(filepath.Join("../kernels/examples/tune", name))
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		if string(want) != string(f.Data) {
			t.Errorf("%s in sweep-cpu-tune.txtar is not the bundled file: copy it again", f.Name)
		}
	}
	ents, _ := os.ReadDir("../kernels/examples/tune/variants")
	if want := 2 + len(ents); n != want {
		t.Errorf("the txtar holds %d of the example's %d files", n, want)
	}
}
