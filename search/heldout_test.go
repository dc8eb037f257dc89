package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeldOutVerification: when the spec declares domains, the plan's
// verification draws held-out cases (DefaultHeldOut unless the options
// say otherwise), the store records them and the report counts them per
// variant; PlanOptions.HeldOut below 0 draws none.
func TestHeldOutVerification(t *testing.T) {
	fx := newFixture(t)
	y, err := os.ReadFile(fx.spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.spec, append(y, "domains:\n  C: {min: 1, max: 9}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := fx.options(t, "", func(o *PlanOptions) { o.HeldOut = -1 }).Plan; p.Verify.HeldOut != 0 {
		t.Errorf("HeldOut -1: plan draws %d", p.Verify.HeldOut)
	}
	out := filepath.Join(t.TempDir(), "out")
	opts := fx.options(t, out, nil)
	if opts.Plan.Verify.HeldOut != DefaultHeldOut {
		t.Fatalf("plan draws %d held-out cases, want %d", opts.Plan.Verify.HeldOut, DefaultHeldOut)
	}
	mustRun(t, opts)
	rep := readReport(t, out)
	vs, _ := rep["variants"].([]any)
	judged := 0
	for _, v := range vs {
		m := v.(map[string]any)
		if m["verification"] != "pass" {
			continue
		}
		judged++
		if n, _ := m["held_out"].(float64); int(n) != DefaultHeldOut {
			t.Errorf("variant %s passed its verification on %v held-out cases, want %d", m["name"], m["held_out"], DefaultHeldOut)
		}
	}
	if judged == 0 {
		t.Fatal("no variant passed its verification")
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "held-out cases") || !strings.Contains(string(md), "4 held-out cases drawn for each variant") {
		t.Errorf("report.md does not say how many held-out cases each verdict rests on")
	}
}
