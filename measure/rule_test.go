package measure

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// evidence returns a Decision in which a candidate gains gain at every
// case (target, three others, two confirmations), with quiet controls:
// the default rule retains it.
func evidence(t *testing.T, gain float64) Decision {
	t.Helper()
	d := Decision{
		Bitwise: true,
		Target:  Case{Name: "pos0=8192", Result: synth(t, 66.19, 1-gain, 0.002, 9, 1)},
		Others: []Case{
			{Name: "pos0=0", Result: synth(t, 28.76, 1-gain, 0.002, 9, 2)},
			{Name: "pos0=2048", Result: synth(t, 59.73, 1-gain, 0.002, 9, 3)},
			{Name: "pos0=30000", Result: synth(t, 109.3, 1-gain, 0.002, 9, 4)},
		},
		Confirmations: []*Result{synth(t, 66.19, 1-gain, 0.002, 9, 5), synth(t, 66.19, 1-gain, 0.002, 9, 6)},
		Before:        synth(t, 66.19, 1, 0.002, 9, 7),
		After:         synth(t, 66.19, 1, 0.002, 9, 8),
	}
	d.Before.Control, d.After.Control = true, true
	return d
}

func TestDecide(t *testing.T) {
	contaminated := func(t *testing.T) *Result {
		r, err := Analyze(pairsOf(t, seedShiftA, seedShiftB), ClockGPU, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Contaminated {
			t.Fatal("the seed's shift is not contaminated")
		}
		return r
	}
	tests := []struct {
		name   string
		rule   func(*Rule)
		edit   func(t *testing.T, d *Decision)
		want   Outcome
		clause string // the clause that decides, with its status
		status Status
		why    string // in that clause's reason
	}{
		{
			name: "4 % gain everywhere", want: Retain,
			clause: "confirmation 2", status: Pass, why: "median gain +4",
		},
		{
			name: "4 % at the target, 2 % slower at another case",
			edit: func(t *testing.T, d *Decision) { d.Others[0].Result = synth(t, 28.76, 1.02, 0.002, 9, 12) },
			want: Reject, clause: "case pos0=0", status: Fail, why: "slower with confidence",
		},
		{
			name: "second confirmation shows no gain",
			edit: func(t *testing.T, d *Decision) { d.Confirmations[1] = synth(t, 66.19, 1, 0.002, 9, 16) },
			want: Reject, clause: "confirmation 2", status: Fail, why: "< 3%",
		},
		{
			name: "confirmation gains 3.5 % but its interval reaches 1",
			edit: func(t *testing.T, d *Decision) { d.Confirmations[0] = synth(t, 66.19, 0.965, 0.05, 9, 21) },
			want: Reject, clause: "confirmation 1", status: Fail, why: "reaches a ratio of 1",
		},
		{
			name: "contaminated other case",
			edit: func(t *testing.T, d *Decision) { d.Others[2].Result = contaminated(t) },
			want: Inconclusive, clause: "case pos0=30000", status: Unusable, why: "contaminated in all 1 attempts",
		},
		{
			name: "contaminated target",
			edit: func(t *testing.T, d *Decision) { d.Target.Result = contaminated(t) },
			want: Inconclusive, clause: "target pos0=8192", status: Unusable, why: "contaminated",
		},
		{
			name: "contaminated confirmation",
			edit: func(t *testing.T, d *Decision) { d.Confirmations[0] = contaminated(t) },
			want: Inconclusive, clause: "confirmation 1", status: Unusable, why: "contaminated",
		},
		{
			name: "contaminated control",
			edit: func(t *testing.T, d *Decision) { d.After = contaminated(t) },
			want: Inconclusive, clause: "control", status: Unusable, why: "control after: contaminated",
		},
		{
			name: "not bitwise identical",
			edit: func(t *testing.T, d *Decision) { d.Bitwise = false },
			want: Reject, clause: "bitwise", status: Fail, why: "not shown bitwise identical",
		},
		{
			name: "bitwise not required",
			rule: func(r *Rule) { r.Bitwise = false },
			edit: func(t *testing.T, d *Decision) { d.Bitwise = false },
			want: Retain, clause: "target pos0=8192", status: Pass, why: "≥ 3%",
		},
		{
			name: "2 % gain at the target",
			edit: func(t *testing.T, d *Decision) { d.Target.Result = synth(t, 66.19, 0.98, 0.002, 9, 31) },
			want: Reject, clause: "target pos0=8192", status: Fail, why: "< 3%",
		},
		{
			name: "a clean failure outweighs a contaminated case",
			edit: func(t *testing.T, d *Decision) {
				d.Target.Result = synth(t, 66.19, 0.98, 0.002, 9, 31)
				d.Others[2].Result = contaminated(t)
			},
			want: Reject, clause: "target pos0=8192", status: Fail, why: "< 3%",
		},
		{
			// 3 % slower on the median, but so noisy the interval
			// cannot say so: not a regression by the rule.
			name: "noisy case slower on its median only",
			edit: func(t *testing.T, d *Decision) {
				ratios := []float64{1.08, 0.93, 1.03, 1.12, 0.97, 1.05, 1.00, 1.04, 1.02}
				a := make([]float64, len(ratios))
				for i := range a {
					a[i] = 59.73
				}
				r, err := Analyze(pairsOf(t, a, scaled(ratios, 59.73)), ClockGPU, Options{})
				if err != nil {
					t.Fatal(err)
				}
				d.Others[1].Result = r
			},
			want: Retain, clause: "case pos0=2048", status: Pass, why: "no slowdown beyond 1% shown",
		},
		{
			name: "slower by 0.5 %, within the tolerance",
			edit: func(t *testing.T, d *Decision) { d.Others[1].Result = synth(t, 59.73, 1.005, 0.002, 9, 42) },
			want: Retain, clause: "case pos0=2048", status: Pass, why: "no slowdown",
		},
		{
			name: "confirmations not yet run",
			edit: func(t *testing.T, d *Decision) { d.Confirmations = d.Confirmations[:1] },
			want: Pending, clause: "confirmation 2", status: Missing, why: "the rule needs 2",
		},
		{
			name: "no controls",
			edit: func(t *testing.T, d *Decision) { d.Before, d.After = nil, nil },
			want: Pending, clause: "control", status: Missing, why: "no control before or after",
		},
		{
			name: "controls not required",
			rule: func(r *Rule) { r.Control = false },
			edit: func(t *testing.T, d *Decision) { d.Before, d.After = nil, nil },
			want: Retain, clause: "target pos0=8192", status: Pass, why: "median gain",
		},
		{
			name: "baseline drifted 2 % between the controls",
			edit: func(t *testing.T, d *Decision) { d.After = synth(t, 67.51, 1, 0.002, 9, 8) },
			want: Inconclusive, clause: "control", status: Unusable, why: "the machine changed",
		},
		{
			name: "control too noisy to resolve 3 %",
			edit: func(t *testing.T, d *Decision) { d.Before = synth(t, 66.19, 1, 0.06, 9, 51) },
			want: Inconclusive, clause: "control", status: Unusable, why: "not less than the 3% gain",
		},
		{
			name: "too few pairs",
			edit: func(t *testing.T, d *Decision) { d.Others[0].Result = synth(t, 28.76, 0.96, 0.002, 7, 2) },
			want: Inconclusive, clause: "case pos0=0", status: Unusable, why: "7 pairs, fewer than the rule's 9",
		},
		{
			name: "a confirmation timed by another clock",
			edit: func(t *testing.T, d *Decision) { d.Confirmations[1].Clock = ClockHost },
			want: Inconclusive, clause: "confirmation 2", status: Unusable, why: "host clock",
		},
		{
			name: "missing target",
			edit: func(t *testing.T, d *Decision) { d.Target.Result = nil },
			want: Pending, clause: "target pos0=8192", status: Missing, why: "no measurement",
		},
		{
			name: "invalid rule",
			rule: func(r *Rule) { r.Confidence = 2 },
			want: Inconclusive, clause: "rule", status: Unusable, why: "confidence 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := DefaultRule()
			if tt.rule != nil {
				tt.rule(&r)
			}
			d := evidence(t, 0.04)
			if tt.edit != nil {
				tt.edit(t, &d)
			}
			v := r.Decide(d)
			if v.Outcome != tt.want {
				t.Errorf("outcome %s, want %s\n%s", v.Outcome, tt.want, clauses(v))
			}
			if v.Rule != r.Hash() {
				t.Errorf("verdict's rule hash %s, want %s", v.Rule, r.Hash())
			}
			var found bool
			for _, c := range v.Clauses {
				if c.Name == tt.clause {
					found = true
					if c.Status != tt.status || !strings.Contains(c.Why, tt.why) {
						t.Errorf("clause %s: %s %q, want %s containing %q", c.Name, c.Status, c.Why, tt.status, tt.why)
					}
				}
			}
			if !found {
				t.Errorf("no clause %q\n%s", tt.clause, clauses(v))
			}
			if tt.want != Retain && !strings.Contains(v.String(), tt.clause) && tt.clause != "rule" {
				t.Errorf("String() = %q does not name the deciding clause %s", v.String(), tt.clause)
			}
		})
	}
}

// TestDecideClauses checks that a clean verdict lists one clause per
// condition, in the documented order.
func TestDecideClauses(t *testing.T) {
	v := DefaultRule().Decide(evidence(t, 0.04))
	var names []string
	for _, c := range v.Clauses {
		names = append(names, c.Name)
		if c.Status != Pass || c.Why == "" {
			t.Errorf("clause %s: %s %q", c.Name, c.Status, c.Why)
		}
	}
	want := "bitwise, target pos0=8192, case pos0=0, case pos0=2048, case pos0=30000, confirmation 1, confirmation 2, control"
	if got := strings.Join(names, ", "); got != want {
		t.Errorf("clauses %s\nwant    %s", got, want)
	}
	if v.String() != "retain" {
		t.Errorf("String() = %q", v.String())
	}
}

// TestContaminatedNeverRetains puts a contaminated result in each slot of
// otherwise retaining evidence.
func TestContaminatedNeverRetains(t *testing.T) {
	slots := map[string]func(d *Decision, r *Result){
		"target":       func(d *Decision, r *Result) { d.Target.Result = r },
		"other":        func(d *Decision, r *Result) { d.Others[1].Result = r },
		"confirmation": func(d *Decision, r *Result) { d.Confirmations[1] = r },
		"before":       func(d *Decision, r *Result) { d.Before = r },
		"after":        func(d *Decision, r *Result) { d.After = r },
	}
	// A contaminated result that would otherwise pass everywhere: a
	// steady 4 % gain, then a jump of both sides in the last two pairs.
	a := append([]float64(nil), tightA...)
	b := scaled(tightB, 0.96)
	a[7], a[8], b[7], b[8] = 84.7, 87.9, 81.3, 84.4
	for name, put := range slots {
		r, err := Analyze(pairsOf(t, a, b), ClockGPU, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Contaminated {
			t.Fatal("test series not contaminated")
		}
		if name == "before" || name == "after" {
			r, _ = Analyze(pairsOf(t, a, append(append([]float64(nil), a[:7]...), 84.9, 87.6)), ClockGPU, Options{})
			r.Control = true
		}
		d := evidence(t, 0.04)
		put(&d, r)
		if v := DefaultRule().Decide(d); v.Outcome != Inconclusive {
			t.Errorf("contaminated %s: %s, want inconclusive\n%s", name, v.Outcome, clauses(v))
		}
	}
}

func TestRuleJSONAndHash(t *testing.T) {
	r := DefaultRule()
	const want = `{"version":1,"bitwise":true,"min_gain":0.03,"max_regression":0.01,"confirmations":2,"confidence":0.95,"min_pairs":9,"control":true,"max_drift":0.01}`
	if got := string(r.JSON()); got != want {
		t.Errorf("JSON\n%s\nwant\n%s", got, want)
	}
	sum := sha256.Sum256([]byte(want))
	if got := r.Hash(); got != hex.EncodeToString(sum[:]) {
		t.Errorf("Hash = %s, want the sha256 of the JSON", got)
	}
	if r.Hash() != DefaultRule().Hash() {
		t.Error("Hash is not stable")
	}
	r2 := r
	r2.MinGain = 0.05
	if r2.Hash() == r.Hash() {
		t.Error("a different rule has the same hash")
	}
	back, err := ParseRule([]byte(want))
	if err != nil || back != r {
		t.Errorf("ParseRule(JSON) = %+v, %v; want the rule", back, err)
	}
	for _, bad := range []string{
		`{"version":1,"min_gain":0.03,"confidence":0.95,"typo":1}`,
		`{"version":2,"confidence":0.95}`,
		`{"version":1,"confidence":0.95,"min_gain":-1}`,
		`{"version":1,"confidence":0.95} {}`,
		`not json`,
	} {
		if _, err := ParseRule([]byte(bad)); err == nil {
			t.Errorf("ParseRule(%s): no error", bad)
		}
	}
}

func TestDrift(t *testing.T) {
	control := func(f float64) *Result {
		r, err := Analyze(pairsOf(t, scaled(tightA, f), scaled(tightB, f)), ClockGPU, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r.Control = true
		return r
	}
	// The seed's baseline-to-baseline check: 66.190 -> 66.122 ms.
	before := control(1)
	after := control(66.122 / 66.190)
	if drifted, why := Drift(before, after); drifted || !strings.Contains(why, "(-0.10%), within 1%") {
		t.Errorf("66.190 → 66.122 ms: drifted %v, %q; want -0.10%%, within 1%%", drifted, why)
	}
	if drifted, why := Drift(before, control(1.02)); !drifted || !strings.Contains(why, "(+2.00%), more than 1%") {
		t.Errorf("2%% slower: drifted %v, %q; want +2.00%%, more than 1%%", drifted, why)
	}
	if drifted, why := Drift(before, control(0.985)); !drifted || !strings.Contains(why, "(-1.50%)") {
		t.Errorf("1.5%% faster: drifted %v, %q; want -1.50%%", drifted, why)
	}
	if drifted, _ := (Rule{MaxDrift: 0.02}).Drift(before, control(1.015)); drifted {
		t.Errorf("1.5%% with MaxDrift 2%%: drifted")
	}
	shifted, err := Analyze(pairsOf(t, seedShiftA, seedShiftA), ClockGPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if drifted, why := Drift(before, shifted); !drifted || !strings.Contains(why, "control after: contaminated") {
		t.Errorf("contaminated control: drifted %v, %q", drifted, why)
	}
	if drifted, why := Drift(nil, after); !drifted || !strings.Contains(why, "control before: no result") {
		t.Errorf("no control: drifted %v, %q", drifted, why)
	}
	host := synth(t, 66.190, 1, 0.001, 9, 3)
	host.Clock = ClockHost
	if drifted, why := Drift(before, host); !drifted || !strings.Contains(why, "different clocks") {
		t.Errorf("clocks: drifted %v, %q", drifted, why)
	}
}

func clauses(v Verdict) string {
	var b strings.Builder
	for _, c := range v.Clauses {
		b.WriteString("  " + c.Name + ": " + string(c.Status) + ": " + c.Why + "\n")
	}
	return b.String()
}
