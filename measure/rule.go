package measure

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// RuleVersion is the version of Decide's semantics a Rule is written for.
const RuleVersion = 1

// A Rule is the decision rule, declared before any candidate runs: its
// JSON form (fields in declaration order) goes into a sweep's plan, and
// Hash identifies it. Every field means what it says, zero included
// (MaxRegression 0 tolerates no regression at all); start from
// DefaultRule.
type Rule struct {
	// Version is RuleVersion; Decide refuses other versions.
	Version int `json:"version"`
	// Bitwise requires the caller's assertion that the candidate's output
	// is bitwise identical to the baseline's on every case.
	Bitwise bool `json:"bitwise"`
	// MinGain is the median gain (1-ratio) required at the target case
	// and in every confirmation: 0.03 is 3 %.
	MinGain float64 `json:"min_gain"`
	// MaxRegression is the slowdown tolerated at any other case: a case
	// regresses when its interval's lower bound on the slowdown (Lo-1)
	// exceeds it, that is when the candidate is slower by more than this
	// with confidence.
	MaxRegression float64 `json:"max_regression"`
	// Confirmations is the number of fresh measurements at the target
	// case that must each show the gain (median gain ≥ MinGain and an
	// interval wholly below a ratio of 1).
	Confirmations int `json:"confirmations"`
	// Confidence is the interval level every result must have been
	// analysed at.
	Confidence float64 `json:"confidence"`
	// MinPairs is the fewest complete pairs a result may have.
	MinPairs int `json:"min_pairs"`
	// Control requires a baseline-vs-baseline control before and after
	// the candidates: neither contaminated, their intervals containing
	// 1 and reaching less than MinGain from it, and the baseline's level
	// moving by at most MaxDrift between them.
	Control  bool    `json:"control"`
	MaxDrift float64 `json:"max_drift"`
}

// DefaultRule returns the default rule: bitwise identical; a median gain
// of at least 3 % at the target case; no case slower by more than 1 %
// with 95 % confidence; two confirmations; at least 9 pairs per result;
// controls before and after, with the baseline moving by at most 1 %.
func DefaultRule() Rule {
	return Rule{
		Version:       RuleVersion,
		Bitwise:       true,
		MinGain:       0.03,
		MaxRegression: 0.01,
		Confirmations: 2,
		Confidence:    DefaultConfidence,
		MinPairs:      DefaultPairs,
		Control:       true,
		MaxDrift:      0.01,
	}
}

// Validate returns an error when r cannot be applied.
func (r Rule) Validate() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	switch {
	case r.Version != RuleVersion:
		return fmt.Errorf("rule version %d: this metalab decides version %d", r.Version, RuleVersion)
	case bad(r.MinGain) || r.MinGain >= 1:
		return fmt.Errorf("rule: min_gain %v is not in [0, 1)", r.MinGain)
	case bad(r.MaxRegression):
		return fmt.Errorf("rule: max_regression %v is not a non-negative number", r.MaxRegression)
	case r.Confirmations < 0:
		return fmt.Errorf("rule: confirmations %d is negative", r.Confirmations)
	case !(r.Confidence > 0 && r.Confidence < 1):
		return fmt.Errorf("rule: confidence %v is not in (0, 1)", r.Confidence)
	case r.MinPairs < 0:
		return fmt.Errorf("rule: min_pairs %d is negative", r.MinPairs)
	case bad(r.MaxDrift):
		return fmt.Errorf("rule: max_drift %v is not a non-negative number", r.MaxDrift)
	}
	return nil
}

// JSON returns r's canonical JSON: compact, fields in declaration order.
func (r Rule) JSON() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		// A struct of bools, ints and finite floats always marshals;
		// a NaN or Inf does not, and such a rule has no identity.
		return []byte(fmt.Sprintf(`{"invalid":%q}`, err.Error()))
	}
	return b
}

// Hash returns the hex sha256 of r's canonical JSON.
func (r Rule) Hash() string {
	sum := sha256.Sum256(r.JSON())
	return hex.EncodeToString(sum[:])
}

// ParseRule reads a rule from JSON, refusing unknown fields and invalid
// values. A field left out is zero, not its default.
func ParseRule(data []byte) (Rule, error) {
	var r Rule
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Rule{}, fmt.Errorf("parse rule: %w", err)
	}
	if dec.More() {
		return Rule{}, fmt.Errorf("parse rule: data after the rule")
	}
	if err := r.Validate(); err != nil {
		return Rule{}, fmt.Errorf("parse rule: %w", err)
	}
	return r, nil
}

// A Case is the result of one case of the kernel spec: Result is the
// candidate (B) against the baseline (A) there.
type Case struct {
	Name   string  `json:"name"`
	Result *Result `json:"result"`
}

// A Decision is the evidence Decide judges.
type Decision struct {
	// Bitwise is the caller's assertion that the candidate's output was
	// bitwise identical to the baseline's on every case checked.
	Bitwise bool `json:"bitwise"`
	// Target is the case the gain is sought at.
	Target Case `json:"target"`
	// Others are the other cases, each judged for regression.
	Others []Case `json:"others,omitempty"`
	// Confirmations are fresh Paired measurements at the target case,
	// taken after the candidate was chosen.
	Confirmations []*Result `json:"confirmations,omitempty"`
	// Before and After are baseline-vs-baseline controls run before and
	// after the candidates; or nil.
	Before *Result `json:"before,omitempty"`
	After  *Result `json:"after,omitempty"`
}

// An Outcome is what Decide concludes.
type Outcome string

// Outcomes, from Decide.
const (
	// Retain: every clause passed.
	Retain Outcome = "retain"
	// Reject: a clause failed on usable evidence.
	Reject Outcome = "reject"
	// Inconclusive: no clause failed, but some evidence is unusable
	// (contaminated, cut short, too few pairs, drifted or noisy
	// controls); measure again.
	Inconclusive Outcome = "inconclusive"
	// Pending: no clause failed and all evidence given is usable, but
	// some is missing (confirmations, controls).
	Pending Outcome = "pending"
)

// A Status is how one clause came out.
type Status string

// Clause statuses.
const (
	Pass     Status = "pass"
	Fail     Status = "fail"
	Unusable Status = "unusable"
	Missing  Status = "missing"
)

// A Clause is one clause of the rule applied to the evidence.
type Clause struct {
	Name   string `json:"name"` // "bitwise", "target <case>", "case <case>", "confirmation 2", "control"
	Status Status `json:"status"`
	Why    string `json:"why"`
}

// A Verdict is Decide's answer: the outcome and every clause with its
// reason, so a report can show why.
type Verdict struct {
	Outcome Outcome  `json:"outcome"`
	Rule    string   `json:"rule_sha256"`
	Clauses []Clause `json:"clauses"`
}

// String returns the outcome followed by the clauses that decided it.
func (v Verdict) String() string {
	want := map[Outcome]Status{Reject: Fail, Inconclusive: Unusable, Pending: Missing}[v.Outcome]
	var why []string
	for _, c := range v.Clauses {
		if c.Status == want {
			why = append(why, c.Name+": "+c.Why)
		}
	}
	if len(why) == 0 {
		return string(v.Outcome)
	}
	return string(v.Outcome) + ": " + strings.Join(why, "; ")
}

// Decide applies r to the evidence. It is a pure function of its
// arguments. Each clause passes, fails, or finds its evidence unusable
// or missing; the outcome is Reject if any clause failed, else
// Inconclusive if any evidence was unusable, else Pending if any was
// missing, else Retain. A contaminated result therefore never retains a
// candidate. The clauses, in order:
//
//   - rule: r is valid (else every other clause is skipped and the
//     verdict is inconclusive);
//   - bitwise: with r.Bitwise, in.Bitwise must be true;
//   - target <case>: the median gain is at least r.MinGain;
//   - case <case>, for each other case: the interval's lower bound on the
//     slowdown, Lo-1, is at most r.MaxRegression;
//   - confirmation i, for i up to max(r.Confirmations, the number
//     given): the median gain is at least r.MinGain and the interval lies
//     wholly below 1 (Hi < 1);
//   - control, with r.Control: both controls usable, each interval
//     containing 1 and reaching less than r.MinGain from it (Spread),
//     and no drift (Rule.Drift) between them.
//
// Every result must be Usable, have at least r.MinPairs pairs, an
// interval at r.Confidence and the target's clock (without a target, the
// first result's), else its clause is unusable.
func (r Rule) Decide(in Decision) Verdict {
	v := Verdict{Rule: r.Hash()}
	add := func(name string, s Status, format string, args ...any) {
		v.Clauses = append(v.Clauses, Clause{Name: name, Status: s, Why: fmt.Sprintf(format, args...)})
	}
	if err := r.Validate(); err != nil {
		add("rule", Unusable, "%v", err)
		v.Outcome = Inconclusive
		return v
	}
	if r.Bitwise {
		if in.Bitwise {
			add("bitwise", Pass, "bitwise identical to the baseline on every case checked")
		} else {
			add("bitwise", Fail, "not shown bitwise identical to the baseline")
		}
	}
	// Every result must be timed by the same clock: the target's, or
	// without a target the first one given.
	clock := ""
	for _, res := range append(append([]*Result{in.Target.Result}, caseResults(in.Others)...), append(in.Confirmations, in.Before, in.After)...) {
		if res != nil {
			clock = res.Clock
			break
		}
	}
	usable := func(res *Result) error {
		if err := res.Usable(); err != nil {
			return err
		}
		switch {
		case res.Stats.N < r.MinPairs:
			return fmt.Errorf("%d pairs, fewer than the rule's %d", res.Stats.N, r.MinPairs)
		case res.Stats.Confidence != r.Confidence:
			return fmt.Errorf("interval at %s, the rule judges at %s", pct(res.Stats.Confidence), pct(r.Confidence))
		case res.Clock != clock:
			return fmt.Errorf("timed by the %s clock, the evidence before it by the %s clock", res.Clock, clock)
		}
		return nil
	}

	name := "target " + in.Target.Name
	if t := in.Target.Result; t == nil {
		add(name, Missing, "no measurement")
	} else if err := usable(t); err != nil {
		add(name, Unusable, "%v", err)
	} else if g := t.Stats.Gain(); g >= r.MinGain {
		add(name, Pass, "median gain %s ≥ %s; %s", pctf(g), pct(r.MinGain), ratioText(t))
	} else {
		add(name, Fail, "median gain %s < %s; %s", pctf(g), pct(r.MinGain), ratioText(t))
	}

	for _, c := range in.Others {
		name := "case " + c.Name
		res := c.Result
		if res == nil {
			add(name, Missing, "no measurement")
			continue
		}
		if err := usable(res); err != nil {
			add(name, Unusable, "%v", err)
			continue
		}
		if slow := res.Stats.Lo - 1; slow > r.MaxRegression {
			add(name, Fail, "slower with confidence: the interval's lower bound on the slowdown, %s, exceeds %s; %s",
				pctf(slow), pct(r.MaxRegression), ratioText(res))
		} else {
			add(name, Pass, "no slowdown beyond %s shown; %s", pct(r.MaxRegression), ratioText(res))
		}
	}

	for i := range max(r.Confirmations, len(in.Confirmations)) {
		name := fmt.Sprintf("confirmation %d", i+1)
		if i >= len(in.Confirmations) || in.Confirmations[i] == nil {
			add(name, Missing, "not measured (the rule needs %d)", r.Confirmations)
			continue
		}
		res := in.Confirmations[i]
		if err := usable(res); err != nil {
			add(name, Unusable, "%v", err)
			continue
		}
		g := res.Stats.Gain()
		switch {
		case g < r.MinGain:
			add(name, Fail, "median gain %s < %s; %s", pctf(g), pct(r.MinGain), ratioText(res))
		case res.Stats.Hi >= 1:
			add(name, Fail, "the interval reaches a ratio of 1 (no gain); %s", ratioText(res))
		default:
			add(name, Pass, "median gain %s ≥ %s, interval below 1; %s", pctf(g), pct(r.MinGain), ratioText(res))
		}
	}

	if r.Control {
		var missing, bad []string
		for _, c := range []struct {
			name string
			res  *Result
		}{{"before", in.Before}, {"after", in.After}} {
			switch {
			case c.res == nil:
				missing = append(missing, c.name)
			case usable(c.res) != nil:
				bad = append(bad, fmt.Sprintf("control %s: %v", c.name, usable(c.res)))
			case c.res.Stats.Lo > 1 || c.res.Stats.Hi < 1:
				bad = append(bad, fmt.Sprintf("control %s is biased: its interval excludes 1; %s", c.name, ratioText(c.res)))
			case c.res.Spread() >= r.MinGain:
				bad = append(bad, fmt.Sprintf("control %s reaches ±%.2f%% from 1, not less than the %s gain to resolve; %s",
					c.name, 100*c.res.Spread(), pct(r.MinGain), ratioText(c.res)))
			}
		}
		if len(bad) == 0 && len(missing) == 0 {
			if drifted, why := r.Drift(in.Before, in.After); drifted {
				bad = append(bad, why)
			} else {
				add("control", Pass, "spread ±%.2f%% before, ±%.2f%% after, under %s; %s",
					100*in.Before.Spread(), 100*in.After.Spread(), pct(r.MinGain), why)
			}
		}
		switch {
		case len(bad) > 0:
			add("control", Unusable, "%s", strings.Join(bad, "; "))
		case len(missing) > 0:
			add("control", Missing, "no control %s", strings.Join(missing, " or "))
		}
	}

	v.Outcome = Retain
	has := func(s Status) bool {
		for _, c := range v.Clauses {
			if c.Status == s {
				return true
			}
		}
		return false
	}
	switch {
	case has(Fail):
		v.Outcome = Reject
	case has(Unusable):
		v.Outcome = Inconclusive
	case has(Missing):
		v.Outcome = Pending
	}
	return v
}

// Drift reports whether the baseline moved between two controls by more
// than the default rule's MaxDrift, and says why either way (see
// Rule.Drift).
func Drift(before, after *Result) (drifted bool, why string) {
	return DefaultRule().Drift(before, after)
}

// Drift reports whether the baseline moved between a control before the
// candidates and one after: whether either control is missing,
// contaminated or cut short, their clocks differ, or the baseline's level
// (the median of every pair sample of both sides) changed by more than
// r.MaxDrift. why says what was compared.
func (r Rule) Drift(before, after *Result) (drifted bool, why string) {
	for _, c := range []struct {
		name string
		res  *Result
	}{{"before", before}, {"after", after}} {
		if err := c.res.Usable(); err != nil {
			return true, fmt.Sprintf("control %s: %v", c.name, err)
		}
	}
	if before.Clock != after.Clock {
		return true, fmt.Sprintf("the controls were timed by different clocks (%s, then %s)", before.Clock, after.Clock)
	}
	lb, la := level(before), level(after)
	rel := la/lb - 1
	text := fmt.Sprintf("baseline %s → %s (%s)", ms(lb), ms(la), pctf(rel))
	if math.Abs(rel) > r.MaxDrift {
		return true, text + ", more than " + pct(r.MaxDrift) + ": the machine changed while the candidates ran"
	}
	return false, text + ", within " + pct(r.MaxDrift)
}

func caseResults(cs []Case) []*Result {
	rs := make([]*Result, len(cs))
	for i, c := range cs {
		rs[i] = c.Result
	}
	return rs
}

// level returns the median of every pair sample of both sides of a
// control.
func level(r *Result) float64 {
	var x []float64
	for _, p := range r.Pairs() {
		x = append(x, float64(p.A), float64(p.B))
	}
	return median(x)
}

// ratioText describes a result's figures for a clause.
func ratioText(r *Result) string {
	s := r.Stats
	return fmt.Sprintf("%s → %s, ratio %.4f [%.4f, %.4f] (%s), %d/%d pairs faster",
		ms(float64(s.MedianA)), ms(float64(s.MedianB)), s.Ratio, s.Lo, s.Hi, pct(s.Confidence), s.Wins, s.N)
}

// pctf formats a fraction as a signed percentage with two decimals.
func pctf(f float64) string { return fmt.Sprintf("%+.2f%%", 100*f) }
