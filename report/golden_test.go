package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the report.md and report.json sections of testdata/*.txtar")

// TestGolden renders the input.json of each testdata/*.txtar and compares
// report.md and report.json with the archive's sections (-update rewrites
// them; review the diff like code).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in := decodeInput(t, section(t, ar, "input.json"))
			got, err := Files(in)
			if err != nil {
				t.Fatalf("Files: %v", err)
			}
			changed := false
			for _, name := range []string{"report.md", "report.json"} {
				want := section(t, ar, name)
				if bytes.Equal(got[name], want) {
					continue
				}
				if *update {
					setSection(ar, name, got[name])
					changed = true
					continue
				}
				t.Errorf("%s differs from the golden (go test ./report -run Golden -update):\n%s", name, diff.Diff("want", want, "got", got[name]))
			}
			if changed {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func decodeInput(t *testing.T, b []byte) *Input {
	t.Helper()
	var in Input
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		t.Fatalf("input.json: %v", err)
	}
	return &in
}

func section(t *testing.T, ar *txtar.Archive, name string) []byte {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("archive has no %s section", name)
	return nil
}

func setSection(ar *txtar.Archive, name string, data []byte) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = data
		}
	}
}

// TestJSONRoundTrip: report.json decodes back into the Input it was made
// from, so a tool can rebuild a report from it.
func TestJSONRoundTrip(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/metal_confirm.txtar")
	if err != nil {
		t.Fatal(err)
	}
	in := decodeInput(t, section(t, ar, "input.json"))
	plots, _, err := Plots(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := JSON(in, plots)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string `json:"schema"`
		Input
		Summary Summary `json:"summary"`
		Plots   []Plot  `json:"plots"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(doc.Input)
	orig, _ := json.Marshal(in)
	if !bytes.Equal(again, orig) {
		t.Errorf("report.json does not decode to its input:\n%s", diff.Diff("input", orig, "decoded", again))
	}
	want := Summary{Variants: 5, Failed: 2, Timed: 3, Retained: 1, Rejected: 1, Inconclusive: 1}
	if doc.Schema != Schema || doc.Summary != want || len(doc.Plots) != len(plots) {
		t.Errorf("schema %q summary %+v plots %d; want %q %+v %d", doc.Schema, doc.Summary, len(doc.Plots), Schema, want, len(plots))
	}
}
