package search

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestNewPlan(t *testing.T) {
	fx := newFixture(t)
	p := fx.options(t, "", nil).Plan
	if p.Target != "quick/C=1" || p.Explore.Case != "quick/C=1" {
		t.Errorf("target %q, explore %q, want quick/C=1 (--target C=1)", p.Target, p.Explore.Case)
	}
	if got := strings.Join(p.Cases, " "); got != "quick/C=1 quick/C=2 quick/C=3" {
		t.Errorf("cases = %s", got)
	}
	if len(p.TimedStages) != 1 || p.TimedStages[0] != "k" || p.Path != "k.metal" || p.TGLimit != 16384 {
		t.Errorf("timed stages %v, path %q, limit %d", p.TimedStages, p.Path, p.TGLimit)
	}
	if p.Baseline != SHA256(fx.options(t, "", nil).File.Src) || len(p.Sources) != 1 || p.Sources[0].SHA256 != p.Baseline {
		t.Errorf("baseline %s, sources %v", p.Baseline, p.Sources)
	}
	// The plan's JSON reads back to the same plan and hash.
	b, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParsePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := p.Hash()
	h2, _ := q.Hash()
	if h1 != h2 || len(Diff(p, q)) != 0 {
		t.Errorf("plan read back differs: %v", Diff(p, q))
	}
	// A changed rule is another plan, and Diff says where.
	r := fx.options(t, "", func(o *PlanOptions) { o.Rule.MinGain = 0.05 }).Plan
	h3, _ := r.Hash()
	d := Diff(p, r)
	if h3 == h1 || len(d) != 2 || !strings.HasPrefix(d[0], "rule:") || !strings.HasPrefix(d[1], "rule_sha256:") {
		t.Errorf("another rule: hash %s (was %s), diff %v", h3, h1, d)
	}
	// Without --target, the last timed case; more sets are checked only.
	s := fx.options(t, "", func(o *PlanOptions) { o.Target, o.CheckSets = "", []string{"more"} }).Plan
	if s.Target != "quick/C=3" || strings.Join(s.Checked, " ") != "quick/C=1 quick/C=2 quick/C=3 more/C=4" || len(s.Cases) != 3 {
		t.Errorf("target %s, checked %v, timed %v", s.Target, s.Checked, s.Cases)
	}
}

func TestNewPlanErrors(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name string
		edit func(*PlanOptions)
		want string
	}{
		{"unknown target", func(o *PlanOptions) { o.Target = "C=9" }, `--target "C=9" is none of the timed cases`},
		{"ambiguous target", func(o *PlanOptions) { o.Target = "quick" }, `--target "quick" names 3 cases`},
		{"explore case not timed", func(o *PlanOptions) { o.ExploreCase = "C=4" }, `--explore-case "C=4"`},
		{"unknown set", func(o *PlanOptions) { o.Sets = []string{"slow"} }, "slow"},
		{"few confirm pairs", func(o *PlanOptions) { o.Confirm.Pairs = 5 }, "fewer than the rule's min_pairs 9"},
		{"unknown strategy", func(o *PlanOptions) { o.Search.Strategy = "anneal" }, `strategy "anneal"`},
		{"no function", func(o *PlanOptions) { o.Functions = nil }, "no owned function"},
		{"unknown operator", func(o *PlanOptions) { o.Search.Ops = []string{"frob"} }, `unknown operator "frob"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fx.build(filepath.Join(t.TempDir(), "out"), tt.edit)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
