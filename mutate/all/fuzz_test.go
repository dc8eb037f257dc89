package all_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/all"
	"metalab/variants"
)

// seedSources returns the kernel sources of the repository: the bundled
// kernels, the examples, the golden inputs of every mutation and the
// parser's golden inputs.
func seedSources(t testing.TB) [][]byte {
	var out [][]byte
	for _, pat := range []string{"../../kernels/*.metal", "../../kernels/examples/*.metal", "../../backend/cpu/conformance/testdata/*.metal"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				out = append(out, b)
			}
		}
	}
	for _, pat := range []string{"../*/testdata/*.txtar", "../../msl/testdata/parse/*.txtar"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				continue
			}
			for _, af := range ar.Files {
				if filepath.Ext(af.Name) == ".metal" {
					out = append(out, af.Data)
				}
			}
		}
	}
	return out
}

// FuzzFind checks that every mutation copes with any input: Find returns
// sites or an error but never panics, every reported choice is valid (Find
// validates them), and every variant builds and still parses as far as the
// base did.
func FuzzFind(f *testing.F) {
	for _, src := range seedSources(f) {
		if len(src) < 4096 {
			f.Add(src) // small inputs: the big kernels take seconds each under coverage
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, _ := msl.Parse("k.metal", src)
		found, err := mutate.Find(file, all.Mutations, nil)
		if err != nil {
			t.Fatalf("Find: %v", err)
		}
		for i, s := range found {
			if i > 64 {
				break
			}
			for _, c := range s.ChoiceNames() {
				if _, err := variants.Build(file, found, []mutate.SiteRef{s.Ref(c)}); err != nil {
					t.Fatalf("build %s=%s: %v", s.ID, c, err)
				}
			}
		}
	})
}

// TestFindSeeds runs FuzzFind's body over the seeds in an ordinary run.
func TestFindSeeds(t *testing.T) {
	for _, src := range seedSources(t) {
		file, _ := msl.Parse("k.metal", src)
		found, err := mutate.Find(file, all.Mutations, nil)
		if err != nil {
			t.Fatalf("Find: %v\n%s", err, src)
		}
		for _, s := range found {
			for _, c := range s.ChoiceNames() {
				v, err := variants.Build(file, found, []mutate.SiteRef{s.Ref(c)})
				if err != nil {
					t.Fatalf("build %s=%s: %v", s.ID, c, err)
				}
				if _, err := msl.Parse("v.metal", v.Source); err != nil && file != nil {
					if _, baseErr := msl.Parse("k.metal", src); baseErr == nil {
						t.Errorf("%s=%s: variant does not parse: %v", s.ID, c, err)
					}
				}
			}
		}
	}
}
