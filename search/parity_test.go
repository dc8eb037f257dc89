package search

import (
	"strings"
	"testing"

	"metalab/check"
)

// TestPlanParity: a tolerance is part of the plan (its hash differs from
// the bitwise plan's), written as check.Parity writes it, and the rule's
// text says it is not bitwise.
func TestPlanParity(t *testing.T) {
	fx := newFixture(t)
	bw := fx.options(t, t.TempDir(), nil).Plan
	tol := fx.options(t, t.TempDir(), func(o *PlanOptions) { o.Parity = check.Parity{Mode: check.ParityULP, ULP: 4} }).Plan
	if bw.Parity != "" || tol.Parity != "ulp=4" {
		t.Fatalf("parity %q and %q, want none and ulp=4", bw.Parity, tol.Parity)
	}
	h1, _ := bw.Hash()
	h2, _ := tol.Hash()
	if h1 == h2 {
		t.Error("the tolerance does not change the plan's hash")
	}
	if txt := PlanRuleText(tol); !strings.Contains(txt, "within ulp=4") || !strings.Contains(txt, "not bitwise") {
		t.Errorf("rule text %q does not say the tolerance", txt)
	}
	if txt := PlanRuleText(bw); !strings.Contains(txt, "bitwise identical on every case") {
		t.Errorf("rule text %q", txt)
	}
	for _, bad := range []string{"ulp=04", "bitwise", "ulps=4", "rel=2"} {
		p := *tol
		p.Parity = bad
		if err := p.Validate(); err == nil {
			t.Errorf("parity %q validated", bad)
		}
	}
	if got := tol.ParityOf(); got.Mode != check.ParityULP || got.ULP != 4 {
		t.Errorf("ParityOf %+v", got)
	}
}

// TestNotBitwiseMessages: a case passed under a tolerance is stored as
// "not bitwise (...)"; a bitwise pass or a failure keeps its message.
func TestNotBitwiseMessages(t *testing.T) {
	tol := &check.Tolerance{Rule: "ulp=4", MaxULP: 2, Case: "quick/C=1", Buffer: "out"}
	if m := parityMessage(check.CaseResult{Status: check.Pass, Tolerance: tol}); !strings.HasPrefix(m, NotBitwisePrefix+" (ulp=4): max 2 ulp") {
		t.Errorf("message %q", m)
	}
	if m := parityMessage(check.CaseResult{Status: check.Pass, Tolerance: &check.Tolerance{Rule: "ulp=4", Bitwise: true}}); m != "" {
		t.Errorf("a bitwise pass says %q", m)
	}
	if m := parityMessage(check.CaseResult{Status: check.FailParity, Msg: "out[3] differs", Tolerance: tol}); m != "out[3] differs" {
		t.Errorf("a failure says %q", m)
	}
	if notBitwise("", "pass", "not bitwise (ulp=4): x") != "not bitwise (ulp=4): x" || notBitwise("a", "b") != "" {
		t.Error("notBitwise")
	}
}
