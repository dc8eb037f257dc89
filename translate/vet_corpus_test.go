package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"metalab/backend"
)

// corpus returns the Metal sources the repository bundles or tests with:
// the kernels, the conformance kernels and the inputs of msl's parse
// goldens. Each is named by its path (and archive member).
func corpus(t *testing.T) map[string]backend.Source {
	t.Helper()
	root := ".."
	out := map[string]backend.Source{}
	for _, pat := range []string{"kernels/*.metal", "backend/cpu/conformance/testdata/*.metal"} {
		paths, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = backend.Source{Name: filepath.Base(p), Text: b, Dir: filepath.Dir(p)}
		}
	}
	archives, err := filepath.Glob(filepath.Join(root, "msl", "testdata", "*", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range archives {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if strings.HasSuffix(f.Name, ".metal") {
				out[p+":"+f.Name] = backend.Source{Name: f.Name, Text: f.Data}
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d corpus sources", len(out))
	}
	return out
}

// corpusErrors are the outcomes expected for the corpus sources that are
// not kernels Metal compiles but inputs of msl's parse goldens: ggml_style
// declares a helper in an extern "C" block, macro_instantiations expands
// NOT_INST(y) to a mutable program-scope variable, and unknown_macros
// includes a header that is not there, so it cannot be vetted (nor
// translated).
var corpusErrors = map[string]string{
	"ggml_style.txtar:input.metal":           "input.metal:37:1: extern \"C\" linkage is not allowed in a Metal kernel\ninput.metal:38:14: function ext_helper is declared but not defined in the source: a Metal kernel may call only functions its source defines or metal_stdlib provides",
	"macro_instantiations.txtar:input.metal": "input.metal:22:1: program-scope variable y_unused is not constant: Metal allows program-scope variables only in the constant address space, with a constant initialiser (in the expansion of macro NOT_INST)",
	"unknown_macros.txtar:input.metal":       `input.metal:1:1: include "mlx/backend/metal/kernels/utils.h": no include directory given`,
}

// TestVetCorpus vets every kernel the repository bundles or tests with:
// none may be refused, besides the parser inputs of corpusErrors.
func TestVetCorpus(t *testing.T) {
	seen := map[string]bool{}
	for name, src := range corpus(t) {
		want := ""
		for suffix, w := range corpusErrors {
			if strings.HasSuffix(name, string(filepath.Separator)+suffix) {
				want = w
				seen[suffix] = true
			}
		}
		got := ""
		if r := refusals(Vet(src, nil)); r != nil {
			got = strings.Join(r, "\n")
		} else if err := Vet(src, nil); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: vetting gave\n%s\nwant\n%s", name, got, want)
		}
	}
	for suffix := range corpusErrors {
		if !seen[suffix] {
			t.Errorf("corpus source %s not found", suffix)
		}
	}
}
