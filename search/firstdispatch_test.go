package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/backendtest"
	"metalab/backend/cpu/cputest"
	"metalab/check"
	"metalab/measure"
	"metalab/msl"
	"metalab/search/store"
	"metalab/spec"
)

// TestFailAfterTimingFirstDispatch sweeps a real kernel with a variant
// that writes the correct bytes only on the first dispatch of a run,
// through a device buffer the dispatches of a sample share: its
// verification (the checking build on the cpu backend) and its
// confirmation (the plain build on the timing backend) run one dispatch
// and pass; its timed samples run two, and the check after the
// measurement catches it. The timing backend is METALAB_TEST_BACKEND's
// (the cpu backend by default; cuda on a GPU machine, where
// scripts/gpu-tests runs it, verified on the cpu backend).
func TestFailAfterTimingFirstDispatch(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles four programs")
	}
	be := backendtest.Selected(t)
	var verify backend.Backend
	verifyName := ""
	if backendtest.Name() != "cpu" {
		verify, verifyName = cputest.Shared(t), "cpu"
	}
	useTestOps(t)
	dir := t.TempDir()
	for _, name := range []string{"counted.metal", "counted.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "counted", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	specPath := filepath.Join(dir, "counted.yaml")
	specBytes, _ := os.ReadFile(specPath)
	s, err := spec.Parse(specPath, specBytes)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(s.Source)
	f, err := msl.Parse(s.Source, src)
	if err != nil {
		t.Fatal(err)
	}
	ph := Phase{Pairs: 2, Warmup: 1, MaxReruns: 0, Dispatches: 2}
	p, err := NewPlan(s, specBytes, f, os.ReadFile, PlanOptions{
		Functions: []string{"counted"}, Backend: be.Name(), Sets: []string{"quick"}, VerifyBackend: verifyName,
		Search:  Settings{Strategy: "ablate", Ops: []string{"test-first-dispatch-only"}, Choices: "all", Seed: 1},
		Explore: ph, Confirm: Phase{Pairs: measure.DefaultRule().MinPairs, Warmup: 1, Top: 1, Dispatches: 2}, Rule: measure.DefaultRule(),
	})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sweep")
	res, err := Run(context.Background(), Options{Plan: p, Spec: s, File: f, Backend: be, Verify: verify, Dir: out, Version: "test"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Variants != 1 || res.FailedAfterTiming != 1 || res.Failed != 0 || res.ProofViolated != 0 || res.Explored != 0 {
		t.Fatalf("result = %+v, want the variant verified, confirmed and failed after timing", res)
	}
	sw, in := openInput(t, out)
	v := in.Variants[0]
	if v.Verification != "pass" || v.Confirmation != "pass" || v.AfterTiming != string(check.FailAfterTiming) {
		t.Errorf("report variant: verification %q, confirmation %q, after timing %q", v.Verification, v.Confirmation, v.AfterTiming)
	}
	rows, _ := sw.Store.Results(context.Background(), store.Query{Stage: store.StageConfirm, Status: string(check.FailAfterTiming)})
	if len(rows) != 1 || !strings.Contains(rows[0].Confirm.Message, "buffer out") {
		t.Errorf("failures after timing: %+v", rows)
	}
}
