package search

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"metalab/msl"
)

// plantedExplorer returns an explorer over the fixture kernel's atoms
// (unroll-pragma full, count2, disable; drop-barrier) whose evaluation
// plants a ratio per atom (their product for a set) and records what it
// evaluated. fail lists atoms whose variants fail their checks.
func plantedExplorer(t *testing.T, set Settings, ratio map[string]float64, fail ...string) (*explorer, *[]string) {
	t.Helper()
	src, err := os.ReadFile("testdata/k.metal")
	if err != nil {
		t.Fatal(err)
	}
	f, err := msl.Parse("k.metal", src)
	if err != nil {
		t.Fatal(err)
	}
	if set.Choices == "" {
		set.Choices = "all"
	}
	if set.Ops == nil {
		set.Ops = []string{"unroll-pragma", "drop-barrier"}
	}
	sp, err := NewSpace(f, &Plan{Functions: []string{"k"}, Search: set})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	x := &explorer{sp: sp, set: set, seen: map[string]Outcome{}, budget: func() error { return nil }}
	x.eval = func(ctx context.Context, c candidate) (Outcome, error) {
		var names []string
		r := 1.0
		passed := true
		for _, a := range c.atoms {
			n := atomName(sp.Atoms[a])
			names = append(names, n)
			if f, ok := ratio[n]; ok {
				r *= f
			}
			if slices.Contains(fail, n) {
				passed = false
			}
		}
		got = append(got, strings.Join(names, "+"))
		return Outcome{Passed: passed, Timed: passed, Ratio: r}, nil
	}
	return x, &got
}

// atomName names an atom "<mutation>=<choice>", unique in the fixture.
func atomName(a Atom) string { return a.Site.Mutation.Name + "=" + a.Choice }

func TestAblateSeededOrder(t *testing.T) {
	orders := map[uint64]string{}
	for _, seed := range []uint64{1, 1, 2} {
		x, got := plantedExplorer(t, Settings{Strategy: "ablate", Seed: seed}, nil)
		if err := x.explore(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(*got) != 4 {
			t.Fatalf("seed %d: ablate evaluated %v, want the 4 atoms alone", seed, *got)
		}
		o := strings.Join(*got, " ")
		if prev, ok := orders[seed]; ok && prev != o {
			t.Errorf("seed %d: order %s, then %s", seed, prev, o)
		}
		orders[seed] = o
	}
	if orders[1] == orders[2] {
		t.Errorf("seeds 1 and 2 give the same order %s", orders[1])
	}
	sorted := func(s string) []string { f := strings.Fields(s); slices.Sort(f); return f }
	if !slices.Equal(sorted(orders[1]), sorted(orders[2])) {
		t.Errorf("seeds 1 and 2 evaluate different atoms: %s, %s", orders[1], orders[2])
	}
}

func TestStack(t *testing.T) {
	// Choices all: the stack takes each site's first choice, in order.
	x, got := plantedExplorer(t, Settings{Strategy: "stack"}, nil)
	if err := x.explore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"unroll-pragma=full", "unroll-pragma=full+drop-barrier=drop"}; !slices.Equal(*got, want) {
		t.Errorf("stack = %v, want %v", *got, want)
	}
	// A step that fails its checks is left out of the later steps.
	x, got = plantedExplorer(t, Settings{Strategy: "stack", Refs: []string{"drop-barrier/k/0", "unroll-pragma/k/0=count2", "unroll-pragma/k/0=disable"}}, nil, "drop-barrier=drop")
	if err := x.explore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"drop-barrier=drop", "unroll-pragma=count2"}; !slices.Equal(*got, want) {
		t.Errorf("stack with a failing step = %v, want %v (a second choice of one site is skipped)", *got, want)
	}
}

func TestLeaveOneOut(t *testing.T) {
	x, got := plantedExplorer(t, Settings{Strategy: "loo"}, nil)
	if err := x.explore(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"unroll-pragma=full+drop-barrier=drop", "drop-barrier=drop", "unroll-pragma=full"}
	if !slices.Equal(*got, want) {
		t.Errorf("loo = %v, want %v", *got, want)
	}
}

func TestGreedyAndBeam(t *testing.T) {
	ratio := map[string]float64{"drop-barrier=drop": 0.9, "unroll-pragma=full": 0.95, "unroll-pragma=count2": 0.97, "unroll-pragma=disable": 1.02}
	x, got := plantedExplorer(t, Settings{Strategy: "greedy", Seed: 1, MinStep: 0.01}, ratio)
	if err := x.explore(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Round 1: the four atoms; drop wins. Round 2: drop with each
	// unroll-pragma choice; full wins (0.855). Round 3: no atom left.
	if len(*got) != 7 {
		t.Errorf("greedy evaluated %v, want 4 then 3", *got)
	}
	last := (*got)[4:]
	slices.Sort(last)
	for _, g := range last {
		if !strings.Contains(g, "drop-barrier=drop") {
			t.Errorf("greedy's second round %v does not build on the best atom", last)
		}
	}
	// With a step of 20%, the first round's best (10% faster) is not
	// worth taking: greedy stops after it.
	x, got = plantedExplorer(t, Settings{Strategy: "greedy", Seed: 1, MinStep: 0.2}, ratio)
	if err := x.explore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 4 {
		t.Errorf("greedy with a 20%% step evaluated %v, want the first round only", *got)
	}
	// A beam of 2 extends drop and unroll-pragma=full: drop+full is
	// found from both, and evaluated once.
	x, got = plantedExplorer(t, Settings{Strategy: "beam", Seed: 1, Beam: 2, MinStep: 0.01}, ratio)
	if err := x.explore(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, g := range *got {
		seen[g]++
	}
	if seen["unroll-pragma=full+drop-barrier=drop"] != 1 || len(*got) != 7 {
		t.Errorf("beam evaluated %v", *got)
	}
}

func TestExplorerBudgetAndShards(t *testing.T) {
	x, got := plantedExplorer(t, Settings{Strategy: "ablate", Seed: 1, Budget: Budget{Variants: 2}}, nil)
	err := x.explore(context.Background())
	var be *BudgetError
	if !errors.As(err, &be) || len(*got) != 2 {
		t.Errorf("budget of 2: %v after %v", err, *got)
	}
	x, _ = plantedExplorer(t, Settings{Strategy: "ablate", Seed: 1}, nil)
	x.budget = func() error { return &BudgetError{Why: "wall=1s spent"} }
	if err := x.explore(context.Background()); !errors.As(err, &be) {
		t.Errorf("a spent time budget: %v", err)
	}
	var all []string
	for i := 1; i <= 3; i++ {
		x, got := plantedExplorer(t, Settings{Strategy: "ablate", Seed: 1}, nil)
		x.shard = Shard{Index: i, Count: 3}
		if err := x.explore(context.Background()); err != nil {
			t.Fatal(err)
		}
		all = append(all, *got...)
	}
	whole, got := plantedExplorer(t, Settings{Strategy: "ablate", Seed: 1}, nil)
	whole.explore(context.Background())
	slices.Sort(all)
	slices.Sort(*got)
	if !slices.Equal(all, *got) {
		t.Errorf("three shards evaluated %v, the whole sweep %v", all, *got)
	}
}

func TestParseShardAndBudget(t *testing.T) {
	for _, tt := range []struct {
		give string
		want Shard
		err  bool
	}{{"1/1", Shard{1, 1}, false}, {"2/4", Shard{2, 4}, false}, {"0/4", Shard{}, true}, {"5/4", Shard{}, true}, {"2/4x", Shard{}, true}, {"a/b", Shard{}, true}} {
		got, err := ParseShard(tt.give)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v", tt.give, got, err)
		}
	}
	for _, tt := range []struct {
		give, want string
		err        bool
	}{
		{"", "none", false},
		{"variants=12", "variants=12", false},
		{"variants=12,device=10m,wall=1h", "variants=12,device=10m0s,wall=1h0m0s", false},
		{"wall=90", "wall=1m30s", false},
		{"variants=0", "", true}, {"device=-1s", "", true}, {"cost=3", "", true}, {"variants", "", true},
	} {
		got, err := ParseBudget(tt.give)
		if (err != nil) != tt.err || !tt.err && got.String() != tt.want {
			t.Errorf("ParseBudget(%q) = %v, %v; want %s", tt.give, got, err, tt.want)
		}
	}
}
