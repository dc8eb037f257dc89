package results

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend/fake"
	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
	"metalab/measure"
	"metalab/msl"
	"metalab/search"
	"metalab/search/store"
	"metalab/spec"
)

// sources copies the search package's test kernel and spec into a
// temporary directory.
func sources(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for _, name := range []string{"k.metal", "k.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "search", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(src, name), b, 0o644)
	}
	return src
}

// sweep runs a small sweep of the kernel in src on the fake backend
// (shard i of n when n > 1) into dir.
func sweep(t *testing.T, src, dir string, i, n int) {
	t.Helper()
	s, err := spec.Load(filepath.Join(src, "k.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	specBytes, _ := os.ReadFile(filepath.Join(src, "k.yaml"))
	text, _ := os.ReadFile(s.Source)
	f, err := msl.Parse(s.Source, text)
	if err != nil {
		t.Fatal(err)
	}
	p, err := search.NewPlan(s, specBytes, f, os.ReadFile, search.PlanOptions{
		Functions: []string{"k"}, Backend: "fake", Sets: []string{"quick"}, Target: "C=1", Path: "k.metal",
		Search:  search.Settings{Strategy: "ablate", Ops: []string{"unroll-pragma", "drop-barrier"}, Choices: "all", Seed: 1},
		Explore: search.DefaultExplore, Confirm: search.DefaultConfirm, Rule: measure.DefaultRule(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := search.Run(context.Background(), search.Options{Plan: p, Spec: s, File: f, Backend: fake.New(), Dir: dir,
		Shard: search.Shard{Index: i, Count: n}}); err != nil {
		t.Fatal(err)
	}
}

func TestNewCmdResults(t *testing.T) {
	o := cmdtest.ParseArgs(t, NewCmdResults, strings.Fields("d --stage check --case pos0=30000 --status pass --json"), "")
	if o.Store != "d" || o.Query.Stage != store.StageCheck || o.Query.Case != "pos0=30000" || o.Query.Status != "pass" || !o.JSON {
		t.Errorf("options = %+v", *o)
	}
	cmdtest.ParseArgs(t, NewCmdResults, strings.Fields("d --stage timing"), `--stage "timing"`)
	cmdtest.ParseArgs(t, NewCmdResults, nil, "want 1 argument")
	cmdtest.ParseArgs(t, NewCmdMerge, strings.Fields("dst"), "at least one <src>")
}

func query(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ios, _, out, _ := cmdutil.Test()
	cmd := NewCmdResults(&cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}, nil)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

func TestResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	sweep(t, sources(t), dir, 0, 0)
	// Which variants passed parity at C=3: every variant and the baseline.
	out, err := query(t, dir, "--stage", "check", "--case", "C=3", "--status", "pass", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got output
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 5 || len(got.Cases) != 1 || got.Cases[0] != "quick/C=3" {
		t.Errorf("checks passed at C=3: %d rows, cases %v", len(got.Rows), got.Cases)
	}
	for _, r := range got.Rows {
		if r.Stage != store.StageCheck || r.Case != "quick/C=3" || r.Check.Status != "pass" {
			t.Errorf("row %+v", r)
		}
	}
	out, err = query(t, dir, "--stage", "decision")
	if err != nil || !strings.Contains(out, "DECISION") || !strings.Contains(out, "drop-barrier.k.0=drop-") || !strings.Contains(out, "retain") {
		t.Errorf("decisions (%v):\n%s", err, out)
	}
	out, err = query(t, dir, "--stage", "control", "--phase", "before")
	if err != nil || strings.Count(out, "quick/C=1  before") != 1 {
		t.Errorf("controls before (%v):\n%s", err, out)
	}
	if _, err := query(t, dir, "--case", "C=9"); err == nil || !errors.As(err, new(*cmdutil.FlagError)) {
		t.Errorf("an unknown case: %v", err)
	}
	out, err = query(t, dir, "--variant", "nothing-like-it")
	if err != nil || !strings.Contains(out, "no results") {
		t.Errorf("no rows (%v):\n%s", err, out)
	}
}

func TestMerge(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	src := sources(t)
	sweep(t, src, a, 1, 2)
	sweep(t, src, b, 2, 2)
	ios, _, out, _ := cmdutil.Test()
	cmd := NewCmdResults(&cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}, nil)
	merged := filepath.Join(tmp, "merged")
	cmd.SetArgs([]string{"merge", merged, a, b})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "merged 2 stores into "+merged) {
		t.Errorf("merge said:\n%s", out)
	}
	rows, err := query(t, merged, "--stage", "variant", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got output
	json.Unmarshal([]byte(rows), &got)
	if len(got.Rows) != 5 {
		t.Errorf("the merged store holds %d variants, want the baseline and 4", len(got.Rows))
	}
}
