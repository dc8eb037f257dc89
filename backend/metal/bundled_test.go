package metal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/msl"
	"metalab/spec"
)

// bundledWithIncludes are the bundled example specs whose kernels include
// headers from the spec's includes: directory.
var bundledWithIncludes = []string{
	"../../kernels/examples/ggml/ggml-ops.yaml",
	"../../kernels/examples/mlx/kernels.yaml",
	"../../kernels/examples/candle/candle-ops.yaml",
	"../../kernels/examples/mfa/attention.yaml",
}

// quotedIncludes lists the #include "..." directives left in text.
func quotedIncludes(text string) []string {
	toks, _ := msl.Lex("", []byte(text))
	var out []string
	for _, tk := range toks {
		if tk.Kind == msl.Directive {
			if inc, ok := quotedInclude(tk.Text); ok {
				out = append(out, inc)
			}
		}
	}
	return out
}

// TestBundledSpecsInlineTheirIncludes: the text Metal is given for every
// stage of the bundled specs with includes: has every quoted include
// inlined, as check builds the Source; without the include directories
// some would be left for Metal, which has no include path, to fail on.
func TestBundledSpecsInlineTheirIncludes(t *testing.T) {
	for _, path := range bundledWithIncludes {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			s, err := spec.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			withDirs := 0
			for _, st := range s.Stages {
				text, err := os.ReadFile(st.Source)
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Includes) > 0 {
					withDirs++
				}
				src := backend.Source{Name: st.Source, Text: text, Dir: filepath.Dir(st.Source), IncludeDirs: st.Includes, Entry: st.Entry}
				out, err := prepareSource(src)
				if err != nil {
					t.Fatalf("stage %s: %v", st.Entry, err)
				}
				if left := quotedIncludes(out); len(left) > 0 {
					t.Errorf("stage %s: includes left for Metal: %s", st.Entry, strings.Join(left, ", "))
				}
				src.IncludeDirs = nil
				out, err = prepareSource(src)
				if err == nil && len(st.Includes) > 0 && len(quotedIncludes(out)) == 0 {
					t.Errorf("stage %s: every include resolved without the spec's includes: too; the test shows nothing", st.Entry)
				}
			}
			if withDirs == 0 {
				t.Errorf("%s: no stage has include directories", path)
			}
		})
	}
}
