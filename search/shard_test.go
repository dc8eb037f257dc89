package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"metalab/search/store"
)

// TestShardsMerge splits an ablation into two shards, merges their
// stores and renders the merged report: it has every variant, with the
// verdicts of an unsharded run. A store of another plan is not merged.
func TestShardsMerge(t *testing.T) {
	fx := newFixture(t)
	tmp := t.TempDir()
	var dirs []string
	built := 0
	for i := 1; i <= 2; i++ {
		dir := filepath.Join(tmp, "shard", string(rune('0'+i)))
		opts := fx.options(t, dir, nil)
		opts.Shard = Shard{Index: i, Count: 2}
		res := mustRun(t, opts)
		if res.Variants != 2 {
			t.Errorf("shard %d/2 built %d variants, want 2 of 4", i, res.Variants)
		}
		built += res.Variants
		dirs = append(dirs, dir)
	}
	merged := filepath.Join(tmp, "merged")
	if err := MergeDirs(merged, dirs); err != nil {
		t.Fatal(err)
	}
	// Merging again adds nothing.
	if err := MergeDirs(merged, dirs); err != nil {
		t.Fatalf("merging twice: %v", err)
	}
	in, err := Rerender(context.Background(), merged, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Variants) != 4 || built != 4 {
		t.Errorf("the merged report has %d variants (shards built %d), want 4", len(in.Variants), built)
	}
	whole := filepath.Join(tmp, "whole")
	mustRun(t, fx.options(t, whole, nil))
	if got, want := verdicts(t, readReport(t, merged)), verdicts(t, readReport(t, whole)); !reflect.DeepEqual(got, want) {
		t.Errorf("merged verdicts %v, unsharded %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(merged, PatchesDir)); err != nil {
		t.Errorf("the merged directory has no patches: %v", err)
	}

	other := filepath.Join(tmp, "other")
	mustRun(t, fx.options(t, other, func(o *PlanOptions) { o.Search.Seed = 2 }))
	err = MergeDirs(filepath.Join(tmp, "mixed"), []string{dirs[0], other})
	if !errors.Is(err, store.ErrOtherPlan) {
		t.Errorf("merging two plans: %v, want ErrOtherPlan", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "mixed")); err == nil {
		t.Error("a refused merge left a directory behind")
	}
}

// TestShardRefusesAdaptive refuses to shard strategies whose steps
// depend on earlier results.
func TestShardRefusesAdaptive(t *testing.T) {
	fx := newFixture(t)
	for _, s := range []string{"stack", "greedy", "beam"} {
		opts := fx.options(t, filepath.Join(t.TempDir(), s), func(o *PlanOptions) {
			o.Search.Strategy = s
			o.Search.Beam = 2
		})
		opts.Shard = Shard{Index: 1, Count: 2}
		if _, err := Run(context.Background(), opts); err == nil {
			t.Errorf("%s: a shard ran", s)
		}
	}
}
