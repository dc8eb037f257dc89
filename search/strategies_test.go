package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"metalab/msl"
	"metalab/report"
	"metalab/spec"
)

func TestStrategyList(t *testing.T) {
	seen := map[string]bool{}
	for _, st := range Strategies {
		if seen[st.Name] || st.run == nil || st.Doc == "" || (st.Over != OverEdits && st.Over != OverParams) {
			t.Errorf("strategy %+v: a name twice, no run, no doc or a bad Over", st)
		}
		seen[st.Name] = true
		if LookupStrategy(st.Name, st.Over) != st || LookupStrategy(st.Name, "") != st {
			t.Errorf("LookupStrategy(%s) does not find it", st.Name)
		}
	}
	if LookupStrategy("grid", OverEdits) != nil || LookupStrategy("ablate", OverParams) != nil {
		t.Error("a strategy is found over what it does not search")
	}
	if got := StrategyNames(OverParams); got != "grid, random" {
		t.Errorf("over params: %q", got)
	}
	if got := StrategyNames(OverEdits); got != "ablate, stack, loo, greedy, beam" {
		t.Errorf("over edits: %q", got)
	}
	for _, tc := range []struct {
		edits, params string
		want          bool
	}{
		{"ablate", "", true}, {"loo", "grid", true}, {"", "random", true},
		{"greedy", "", false}, {"ablate", "nonesuch", false}, {"stack", "grid", false},
	} {
		if got := (Settings{Strategy: tc.edits, Tune: tc.params}).Shardable(); got != tc.want {
			t.Errorf("%s,%s shardable: %v, want %v", tc.edits, tc.params, got, tc.want)
		}
	}
}

// tuneFixture is the fixture with a tune: section: NSG in 4 (default), 2,
// 8, 16, 32, at most 256 threads, setting the threads and a define.
func tuneFixture(t *testing.T) (fixture, *spec.Spec) {
	t.Helper()
	fx := newFixture(t)
	y, _ := os.ReadFile(fx.spec)
	text := strings.Replace(string(y), "threads: [64]", "threads: [NSG * 16]", 1) +
		"defines: {NSG: NSG}\ntune:\n  params:\n    NSG: [4, 2, 8, 16, 32]\n  restrictions:\n    - NSG * 16 <= 256\n"
	if err := os.WriteFile(fx.spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(fx.spec, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return fx, s
}

func TestPlanPoints(t *testing.T) {
	_, s := tuneFixture(t)
	grid, err := PlanPoints(s, "grid", 0, 1)
	if err != nil || !slices.Equal(grid, []string{"NSG=2", "NSG=8", "NSG=16"}) {
		t.Fatalf("grid: %v %v; want every allowed point but the default, in order", grid, err)
	}
	r1, _ := PlanPoints(s, "random", 2, 7)
	r2, _ := PlanPoints(s, "random", 2, 7)
	if len(r1) != 2 || !slices.Equal(r1, r2) {
		t.Errorf("random: %v then %v; want the same 2 points for one seed", r1, r2)
	}
	for _, p := range r1 {
		if !slices.Contains(grid, p) {
			t.Errorf("random drew %s, not a point of the grid", p)
		}
	}
	differ := false
	for seed := uint64(1); seed < 20 && !differ; seed++ {
		r, _ := PlanPoints(s, "random", 1, seed)
		differ = !slices.Equal(r, r1[:1]) && len(r) == 1
	}
	if !differ {
		t.Error("no seed draws another point")
	}
	if all, _ := PlanPoints(s, "random", 10, 1); !slices.Equal(all, grid) {
		t.Errorf("more samples than points: %v, want the grid", all)
	}
	plain, _ := spec.Parse("plain.yaml", []byte("source: k.metal\nvars: {C: 1}\nbuffers:\n  - {name: o, index: 0, type: uchar, count: 4, role: output}\nstages:\n  - {entry: k, threadgroups: [1], threads: [1]}\nsets:\n  s:\n    cases: [{C: 1}]\n"))
	if _, err := PlanPoints(plain, "grid", 0, 1); err == nil || !strings.Contains(err.Error(), "no tune: section") {
		t.Errorf("a spec without parameters: %v", err)
	}

	for text, want := range map[string]string{"": "", "NSG=4": "", "NSG=8": "NSG=8"} {
		if got, err := FixedPoint(s, text); err != nil || got != want {
			t.Errorf("FixedPoint(%q) = %q, %v; want %q", text, got, err, want)
		}
	}
	for _, bad := range []string{"NSG=32", "NSG=3", "TILE=4", "NSG"} {
		if _, err := FixedPoint(s, bad); err == nil {
			t.Errorf("FixedPoint(%q) accepted", bad)
		}
	}
}

// TestExplorePoints: the parameter strategy tries every point on the
// baseline's source and on each hand-written variant, after the variants
// at the fixed point, each once, keyed apart from its source and named
// with its point; the variants budget counts them all.
func TestExplorePoints(t *testing.T) {
	fx, _ := tuneFixture(t)
	drop, _, _ := fx.writeVariants(t)
	files := fx.loadFiles(t, drop)
	opts := fx.options(t, t.TempDir(), func(o *PlanOptions) {
		o.Search.Ops, o.Search.Files, o.Search.Strategy, o.Search.Tune = nil, files, "", "grid"
	})
	src, _ := os.ReadFile(filepath.Join(fx.dir, "k.metal"))
	f, _ := msl.Parse("k.metal", src)
	sp, err := NewSpace(f, opts.Plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.LoadFiles(opts.Plan, false, func(vf VariantFile) ([]byte, error) { return os.ReadFile(vf.Path) }); err != nil {
		t.Fatal(err)
	}
	var got []string
	keys := map[string]bool{}
	x := &explorer{sp: sp, set: opts.Plan.Search, seen: map[string]Outcome{}, budget: func() error { return nil }}
	x.eval = func(ctx context.Context, c candidate) (Outcome, error) {
		got = append(got, c.v.Name)
		keys[c.v.Sha256] = true
		if len(c.point) > 0 && (!strings.HasSuffix(c.v.Name, pointSuffix(c.point)) || sp.PointOf(c.v.Sha256).String() != c.point.String()) {
			t.Errorf("%s at %s: name or point lost", c.v.Name, c.point)
		}
		return Outcome{Passed: true}, nil
	}
	if n := x.expected(); n != 7 {
		t.Errorf("expected %d, want 7 (the file, then 3 points on 2 sources)", n)
	}
	if err := x.explore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 || len(keys) != 7 || !strings.HasPrefix(got[0], "file.drop-") || got[1] != "point@NSG=2" || !strings.HasPrefix(got[2], "file.drop-") || !strings.HasSuffix(got[2], "@NSG=2") {
		t.Errorf("explored %v", got)
	}
	// Rebuilt from its stored refs, a point variant is the same.
	v, err := RebuildVariant(sp, []string{files[0].Ref(), PointRefPrefix + "NSG=8"})
	if err != nil || !keys[v.Sha256] || !strings.HasSuffix(v.Name, "@NSG=8") {
		t.Errorf("rebuilt %v, %v", v, err)
	}

	x = &explorer{sp: sp, set: opts.Plan.Search, seen: map[string]Outcome{}, budget: func() error { return nil }, eval: x.eval}
	x.set.Budget.Variants = 3
	got = nil
	var be *BudgetError
	if err := x.explore(context.Background()); !errors.As(err, &be) || len(got) != 3 {
		t.Errorf("with variants=3: %v, explored %v", err, got)
	}
}

// TestSweepPointOverLimit: a point whose tile is over the threadgroup
// memory limit at its own defines is not compiled; the others run under
// their own geometry and are compared with the default-point baseline.
func TestSweepPointOverLimit(t *testing.T) {
	fx, _ := tuneFixture(t)
	k := filepath.Join(fx.dir, "k.metal")
	b, _ := os.ReadFile(k)
	text := strings.Replace(string(b), "threadgroup uchar s[64];", "threadgroup uchar s[NSG * 64];", 1)
	text = strings.Replace(text, "#include <metal_stdlib>", "#include <metal_stdlib>\n#ifndef NSG\n#define NSG 4\n#endif", 1)
	os.WriteFile(k, []byte(text), 0o644)
	opts := fx.options(t, filepath.Join(t.TempDir(), "sweep"), func(o *PlanOptions) {
		o.Search.Ops, o.Search.Strategy, o.Search.Tune, o.TGLimit = nil, "", "grid", 512
	})
	res := mustRun(t, opts)
	if res.Variants != 3 || res.Failed != 1 {
		t.Fatalf("variants %d, failed %d; want 3 and 1 (NSG=16)", res.Variants, res.Failed)
	}
	sw, err := Open(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Store.Close()
	in, err := BuildInput(context.Background(), sw.Store, sw.Plan, sw.Space, report.Provenance{}, opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range in.Variants {
		over := v.Point == "NSG=16"
		if over != (v.Compile == "fail-tgmem") || v.Point == "" {
			t.Errorf("%s at %q: compile %s", v.Name, v.Point, v.Compile)
		}
		if over && !strings.Contains(v.CheckMessage, "1024 bytes of static threadgroup memory by its source at NSG=16, limit 512") {
			t.Errorf("%s: %q", v.Name, v.CheckMessage)
		}
	}
}

// TestExploreEditsAtPoints: the parameter strategy crosses its points with
// the edit variants that passed (sources x points), and a failed edit
// variant is not crossed.
func TestExploreEditsAtPoints(t *testing.T) {
	fx, _ := tuneFixture(t)
	opts := fx.options(t, t.TempDir(), func(o *PlanOptions) {
		o.Search.Ops, o.Search.Strategy, o.Search.Tune = []string{"drop-barrier", "unroll-pragma"}, "ablate", "grid"
	})
	src, _ := os.ReadFile(filepath.Join(fx.dir, "k.metal"))
	f, _ := msl.Parse("k.metal", src)
	sp, err := NewSpace(f, opts.Plan)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	x := &explorer{sp: sp, set: opts.Plan.Search, seen: map[string]Outcome{}, budget: func() error { return nil }}
	x.eval = func(ctx context.Context, c candidate) (Outcome, error) {
		got = append(got, c.v.Name)
		// Only drop-barrier passes.
		return Outcome{Passed: strings.HasPrefix(c.v.Name, "drop-barrier") || len(c.atoms) == 0}, nil
	}
	if err := x.explore(context.Background()); err != nil {
		t.Fatal(err)
	}
	atoms := len(sp.Atoms)
	if want := atoms + 3*2; len(got) != want {
		t.Fatalf("explored %d: %v; want the %d atoms, then 3 points on the baseline's source and on drop-barrier", len(got), got, atoms)
	}
	for _, n := range got[atoms:] {
		if !strings.Contains(n, "@NSG=") || strings.HasPrefix(n, "unroll") {
			t.Errorf("at a point: %s", n)
		}
	}
	v, err := RebuildVariant(sp, append(refStrings(sp, "drop-barrier"), PointRefPrefix+"NSG=2"))
	if err != nil || !slices.Contains(got, v.Name) {
		t.Errorf("rebuilt %v, %v: not one explored", v, err)
	}
}

// refStrings returns the refs of sp's atoms whose operator is op.
func refStrings(sp *Space, op string) []string {
	var out []string
	for _, a := range sp.Atoms {
		if a.Site.Mutation.Name == op {
			out = append(out, a.Ref.String())
		}
	}
	return out
}

// TestSuggestDispatches: a contaminated measurement of short samples
// suggests the dispatches that would time them; a clean one, or long
// samples, suggests nothing.
func TestSuggestDispatchesResult(t *testing.T) {
	fx := newFixture(t)
	p := fx.options(t, t.TempDir(), nil).Plan
	for _, tc := range []struct {
		contaminated bool
		median       float64
		want         int
	}{
		{true, 280e3, 5}, {false, 280e3, 0}, {true, 2e6, 0},
	} {
		w := &sweep{plan: p, res: &Result{}, opts: Options{Dir: t.TempDir()}, now: time.Now}
		in := &report.Input{Controls: []report.Control{{Case: p.Target, Contaminated: tc.contaminated, MedianA: tc.median}}}
		w.suggest(in)
		if w.res.Dispatches != tc.want || (tc.want > 0) != strings.Contains(w.res.Suggest, fmt.Sprintf("--dispatches %d", tc.want)) {
			t.Errorf("%+v: suggests %d (%q), want %d", tc, w.res.Dispatches, w.res.Suggest, tc.want)
		}
	}
}
