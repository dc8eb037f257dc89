package search

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"metalab/backend/fake"
	"metalab/measure"
	"metalab/msl"
	"metalab/report"
	"metalab/spec"
)

// fixture is a copy of testdata's kernel and spec in a temporary
// directory, with extra marker lines inserted at the top of k's body.
type fixture struct {
	dir  string
	spec string
}

func newFixture(t testing.TB, extra ...string) fixture {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/k.metal")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	if len(extra) > 0 {
		text = strings.Replace(text, "    // fake: copy 0 1\n", "    // fake: copy 0 1\n    // fake: "+strings.Join(extra, "\n    // fake: ")+"\n", 1)
	}
	if err := os.WriteFile(filepath.Join(dir, "k.metal"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile("testdata/k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "k.yaml"), y, 0o644); err != nil {
		t.Fatal(err)
	}
	return fixture{dir: dir, spec: filepath.Join(dir, "k.yaml")}
}

// planOptions are the tests' defaults: ablate every choice of
// unroll-pragma and drop-barrier, check and time the quick set, seek the
// gain at C=1.
func planOptions() PlanOptions {
	return PlanOptions{
		Functions: []string{"k"}, Backend: "fake", Sets: []string{"quick"}, Target: "C=1",
		Search:  Settings{Strategy: "ablate", Ops: []string{"unroll-pragma", "drop-barrier"}, Choices: "all", Seed: 1},
		Explore: DefaultExplore, Confirm: DefaultConfirm, Rule: measure.DefaultRule(),
	}
}

// options returns Run's options for the fixture's sweep into out.
func (fx fixture) options(t testing.TB, out string, edit func(*PlanOptions)) Options {
	t.Helper()
	opts, err := fx.build(out, edit)
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

func (fx fixture) build(out string, edit func(*PlanOptions)) (Options, error) {
	specBytes, err := os.ReadFile(fx.spec)
	if err != nil {
		return Options{}, err
	}
	s, err := spec.Parse(fx.spec, specBytes)
	if err != nil {
		return Options{}, err
	}
	src, err := os.ReadFile(s.Source)
	if err != nil {
		return Options{}, err
	}
	f, err := msl.Parse(s.Source, src)
	if err != nil {
		return Options{}, err
	}
	po := planOptions()
	if edit != nil {
		edit(&po)
	}
	p, err := NewPlan(s, specBytes, f, os.ReadFile, po)
	if err != nil {
		return Options{}, err
	}
	return Options{Plan: p, Spec: s, File: f, Backend: fake.New(), Dir: out, Version: "test"}, nil
}

func mustRun(t *testing.T, opts Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// readReport reads report.json of dir.
func readReport(t testing.TB, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// timingKeys are the fields of report.json that come from timings.
var timingKeys = []string{"median_a_ns", "median_b_ns", "ratio", "ci", "samples", "ratio_min", "ratio_max", "flags", "contaminated", "contamination", "reasons"}

// masked returns v with every timing field removed.
func masked(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if !slices.Contains(timingKeys, k) {
				out[k] = masked(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = masked(e)
		}
		return out
	}
	return v
}

// verdicts returns the report's verdict per variant name.
func verdicts(t testing.TB, rep map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	vs, _ := rep["variants"].([]any)
	for _, v := range vs {
		m := v.(map[string]any)
		verdict, _ := m["verdict"].(string)
		out[m["name"].(string)] = verdict
	}
	return out
}

// variant returns the report's variant whose name starts with prefix.
func reportVariant(t testing.TB, in *report.Input, prefix string) report.Variant {
	t.Helper()
	for _, v := range in.Variants {
		if strings.HasPrefix(v.Name, prefix) {
			return v
		}
	}
	t.Fatalf("no variant %s* in the report", prefix)
	return report.Variant{}
}
