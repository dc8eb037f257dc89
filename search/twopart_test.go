package search

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/fake"
	"metalab/check"
	"metalab/report"
	"metalab/search/store"
)

// verifier is a fake backend under another name and device, standing for
// a verification backend apart from the timing one (the cpu backend for
// a cuda sweep); available reports what Available says.
type verifier struct {
	*fake.Backend
	unavailable string
}

func (v *verifier) Name() string { return "fake-verify" }

func (v *verifier) Info(ctx context.Context) backend.Info {
	i := v.Backend.Info(ctx)
	i.Name, i.Device = "fake-verify", "the verifying one"
	return i
}

func (v *verifier) Available(context.Context) (bool, string) {
	return v.unavailable == "", v.unavailable
}

// corrupting is a fake timing backend whose programs compiled from a
// source marked by test-gpu-differs set out[9] to 0x3c after every run:
// on the hardware the variant differs, in the verification it does not.
type corrupting struct{ *fake.Backend }

func (c corrupting) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	p, err := c.Backend.Compile(ctx, src)
	if err != nil || !strings.Contains(string(src.Text), "// test: the timing backend's bytes differ") {
		return p, err
	}
	return corruptProgram{p}, nil
}

type corruptProgram struct{ backend.Program }

func (p corruptProgram) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	r, err := p.Program.Run(ctx, d)
	if err == nil && len(r.Outputs[1]) > 9 {
		r.Outputs[1][9] = 0x3c
	}
	return r, err
}

// openInput opens the sweep in out and builds its report's input.
func openInput(t *testing.T, out string) (*Sweep, *report.Input) {
	t.Helper()
	sw, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	in, err := BuildInput(context.Background(), sw.Store, sw.Plan, sw.Space, report.Provenance{}, out)
	if err != nil {
		t.Fatal(err)
	}
	return sw, in
}

// TestTwoPartVerdict verifies every variant on one backend and confirms
// and times it on another: the store keeps the verification under the
// verifying backend and the confirmation under the timing one, and the
// report shows both parts.
func TestTwoPartVerdict(t *testing.T) {
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "sweep")
	opts := fx.options(t, out, func(o *PlanOptions) {
		o.VerifyBackend = "fake-verify"
		o.Search.Choices = "first"
	})
	opts.Verify = &verifier{Backend: fake.New()}
	res := mustRun(t, opts)
	if !res.Verified || !strings.Contains(res.Verification, "verified on fake-verify (the verifying one) in the checking mode") ||
		!strings.Contains(res.Verification, "confirmed on fake") {
		t.Errorf("result says %v %q", res.Verified, res.Verification)
	}
	if res.Variants != 2 || res.Failed != 0 || res.Explored != 2 || len(res.Retained) != 1 {
		t.Errorf("result = %+v", res)
	}
	sw, in := openInput(t, out)
	ctx := context.Background()
	checks, _ := sw.Store.Results(ctx, store.Query{Stage: store.StageCheck})
	confirms, _ := sw.Store.Results(ctx, store.Query{Stage: store.StageConfirm})
	for _, r := range checks {
		if r.Backend != "fake-verify" {
			t.Errorf("a verification recorded on %s: %+v", r.Backend, r)
		}
	}
	var before, after int
	for _, r := range confirms {
		if r.Backend != "fake" {
			t.Errorf("a confirmation recorded on %s: %+v", r.Backend, r)
		}
		if r.Phase == "" {
			before++
		} else {
			after++
		}
	}
	// quick has 3 cases: the baseline and 2 variants verified at each,
	// confirmed at each; every variant measurement checked after.
	if len(checks) != 9 || before != 9 || after == 0 {
		t.Errorf("%d verifications, %d confirmations, %d checks after timing; want 9, 9 and some", len(checks), before, after)
	}
	for _, v := range in.Variants {
		if v.Verification != "pass" || v.Confirmation != "pass" || v.Check != "pass" || v.AfterTiming != "pass" || v.Stopped != "" {
			t.Errorf("report variant %s: verification %q confirmation %q after %q check %q stopped %q", v.Name, v.Verification, v.Confirmation, v.AfterTiming, v.Check, v.Stopped)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"| verification | confirmation | after timing |", "> checks: verified on fake-verify"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestVerificationUnavailable refuses, before any work, a sweep whose
// verification backend cannot run here: an environment error, never a
// sweep that confirms bytes only.
func TestVerificationUnavailable(t *testing.T) {
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "sweep")
	opts := fx.options(t, out, func(o *PlanOptions) { o.VerifyBackend = "fake-verify" })
	opts.Verify = &verifier{Backend: fake.New(), unavailable: "no C++ compiler (set CXX)"}
	_, err := Run(context.Background(), opts)
	var env *backend.EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), "no C++ compiler") {
		t.Fatalf("Run = %v, want an environment error with the reason", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the sweep wrote its directory before refusing")
	}
	opts.Verify = nil
	if _, err := Run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "no verification backend") {
		t.Errorf("a plan verifying on fake-verify without one: %v", err)
	}
}

// TestNoVerify confirms only: every result and the report say the
// variants were not verified, and nothing is recorded as verified.
func TestNoVerify(t *testing.T) {
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "sweep")
	res := mustRun(t, fx.options(t, out, func(o *PlanOptions) {
		o.NoVerify = true
		o.Search.Ops = []string{"drop-barrier"}
	}))
	if res.Verified || !strings.HasPrefix(res.Verification, "not verified") {
		t.Errorf("result says %v %q, want not verified", res.Verified, res.Verification)
	}
	sw, in := openInput(t, out)
	if checks, _ := sw.Store.Results(context.Background(), store.Query{Stage: store.StageCheck}); len(checks) != 0 {
		t.Errorf("%d verifications recorded with verification off", len(checks))
	}
	if in.Verified || len(in.Variants) != 1 {
		t.Errorf("report: verified %v, %d variants", in.Verified, len(in.Variants))
	}
	for _, v := range in.Variants {
		if v.Verification != "not verified" || v.Confirmation != "pass" {
			t.Errorf("report variant %s: verification %q confirmation %q", v.Name, v.Verification, v.Confirmation)
		}
	}
	rep := readReport(t, out)
	if rep["verified"] != false {
		t.Errorf("report.json verified = %v", rep["verified"])
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "not verified") || !strings.Contains(string(md), "| pass, not verified |") {
		t.Errorf("report.md does not say in every timed row that the variants were not verified:\n%s", md)
	}
}

// TestProofViolated plants a proof-claiming operator that breaks the
// outputs: its variant is a proof violated (metalab's bug), counted apart
// from the dropped barrier whose failure is the variant's own.
func TestProofViolated(t *testing.T) {
	useTestOps(t)
	fx := newFixture(t)
	k := filepath.Join(fx.dir, "k.metal")
	b, _ := os.ReadFile(k)
	os.WriteFile(k, []byte(strings.Replace(string(b), "// fake: time 1ms", "// fake: poke 1 0 7", 1)), 0o644)
	out := filepath.Join(t.TempDir(), "sweep")
	var logs []string
	opts := fx.options(t, out, func(o *PlanOptions) { o.Search.Ops = []string{"test-break-proven", "drop-barrier"} })
	opts.Log = func(v, line string) { logs = append(logs, v+": "+line) }
	res := mustRun(t, opts)
	if res.Variants != 2 || res.ProofViolated != 1 || res.Failed != 1 {
		t.Fatalf("result = %+v, want 2 variants: 1 proof violated, 1 failed", res)
	}
	_, in := openInput(t, out)
	broken := reportVariant(t, in, "test-break-proven.k.0=plant-")
	dropped := reportVariant(t, in, "drop-barrier.k.0=drop-")
	if !broken.ProofViolated || broken.Check != string(check.ProofViolated) || broken.Stopped != check.PartVerification ||
		!strings.Contains(broken.CheckMessage, "bug in metalab") {
		t.Errorf("the broken proof: %+v", broken)
	}
	if dropped.ProofViolated || dropped.Check != string(check.FailParity) {
		t.Errorf("the dropped barrier: proof violated %v, check %q; want its own parity failure", dropped.ProofViolated, dropped.Check)
	}
	if !strings.Contains(strings.Join(logs, "\n"), "This is a bug in metalab, not in the kernel") {
		t.Errorf("no log line says it is metalab's bug:\n%s", strings.Join(logs, "\n"))
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "**Proof violated: 1 variant**") || !strings.Contains(string(md), "1 proof violated (a metalab bug)") {
		t.Errorf("report.md does not count the proof violated:\n%s", md)
	}
}

// TestFailAfterTiming plants a variant that writes the correct bytes only
// on the first dispatch of a run: its checks (one dispatch) pass, its
// timed samples (two dispatches) do not, and the check after its
// measurement stops it. With one dispatch per sample it passes: the
// check reads what was timed.
func TestFailAfterTiming(t *testing.T) {
	useTestOps(t)
	fx := newFixture(t)
	// out starts zero, so the planted add leaves in alone on a run's
	// first dispatch.
	y, _ := os.ReadFile(fx.spec)
	os.WriteFile(fx.spec, []byte(strings.Replace(string(y), "role: output}", `role: output, sentinel: "00"}`, 1)), 0o644)
	two := func(o *PlanOptions) {
		o.Search.Ops = []string{"test-once-only"}
		o.Explore.Dispatches, o.Confirm.Dispatches = 2, 2
	}
	out := filepath.Join(t.TempDir(), "sweep")
	res := mustRun(t, fx.options(t, out, two))
	if res.Variants != 1 || res.FailedAfterTiming != 1 || res.Explored != 0 || res.Failed != 0 || res.Confirmed != 0 {
		t.Fatalf("result = %+v, want the variant failed after timing, not explored", res)
	}
	sw, in := openInput(t, out)
	rows, _ := sw.Store.Results(context.Background(), store.Query{Stage: store.StageConfirm, Status: string(check.FailAfterTiming)})
	if len(rows) != 1 || rows[0].Phase != PhaseExplore || rows[0].Measurement == "" || !strings.Contains(rows[0].Confirm.Message, "differ from the baseline's") {
		t.Errorf("failures after timing = %+v", rows)
	}
	v := in.Variants[0]
	if v.Verification != "pass" || v.Confirmation != "pass" || v.AfterTiming != string(check.FailAfterTiming) || v.Check != string(check.FailAfterTiming) || v.Stopped != "after timing" || in.Ablation == nil {
		t.Errorf("report variant %+v", v)
	}
	sw.Close()

	// Resumed, it is not timed again.
	opts := fx.options(t, out, two)
	opts.Resume = true
	var taken []string
	opts.onResult = func(stage string, k store.Key) { taken = append(taken, stage+" "+k.String()) }
	res = mustRun(t, opts)
	if len(taken) > 0 || res.FailedAfterTiming != 1 {
		t.Errorf("resumed: took %v, %d failed after timing", taken, res.FailedAfterTiming)
	}

	res = mustRun(t, fx.options(t, filepath.Join(t.TempDir(), "one"), func(o *PlanOptions) { o.Search.Ops = []string{"test-once-only"} }))
	if res.FailedAfterTiming != 0 || res.Explored != 1 {
		t.Errorf("with one dispatch per sample: %+v, want it explored", res)
	}
}

// TestPlanWithoutVerification refuses to run or resume a plan made
// before variants were verified and confirmed apart.
func TestPlanWithoutVerification(t *testing.T) {
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "sweep")
	opts := fx.options(t, out, nil)
	opts.Plan.Verify = nil
	if _, err := Run(context.Background(), opts); !errors.Is(err, ErrNoVerification) {
		t.Errorf("Run of a plan without verification: %v", err)
	}

	// A directory whose plan.json says nothing of verification is not
	// resumed; a store read with such a plan shows its checks as the
	// verification, and no confirmation.
	mustRun(t, fx.options(t, out, func(o *PlanOptions) { o.Search.Ops = []string{"drop-barrier"} }))
	b, _ := os.ReadFile(filepath.Join(out, PlanFile))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "verify")
	old, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(out, PlanFile), old, 0o644)
	opts = fx.options(t, out, func(o *PlanOptions) { o.Search.Ops = []string{"drop-barrier"} })
	opts.Resume = true
	var re *ResumeError
	if _, err := Run(context.Background(), opts); !errors.As(err, &re) || !strings.Contains(err.Error(), "older metalab") {
		t.Errorf("resuming a directory whose plan has no verification: %v", err)
	}
	sw, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	legacy := *sw.Plan
	legacy.Verify = nil
	in, err := BuildInput(context.Background(), sw.Store, &legacy, sw.Space, report.Provenance{}, out)
	if err != nil {
		t.Fatal(err)
	}
	if v := in.Variants[0]; v.Verification != "pass" || v.Check != "pass" || v.Confirmation != "" || !strings.HasPrefix(in.Verification, "checked on fake") {
		t.Errorf("a legacy plan's report: verification %q check %q confirmation %q; %q", v.Verification, v.Check, v.Confirmation, in.Verification)
	}
}

// TestConfirmationFails verifies on one backend and confirms on another
// whose bytes differ for one variant: it passes its verification, fails
// its confirmation and is never timed; made of a proven operator only, it
// is a proof violated. The dropped barrier passes both and is timed.
func TestConfirmationFails(t *testing.T) {
	useTestOps(t)
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "sweep")
	opts := fx.options(t, out, func(o *PlanOptions) {
		o.VerifyBackend = "fake-verify"
		o.Search.Ops = []string{"test-gpu-differs", "drop-barrier"}
	})
	opts.Backend = corrupting{fake.New()}
	opts.Verify = &verifier{Backend: fake.New()}
	res := mustRun(t, opts)
	if res.Variants != 2 || res.ProofViolated != 1 || res.Failed != 0 || res.Explored != 1 {
		t.Fatalf("result = %+v, want the marked variant a proof violated and the dropped barrier explored", res)
	}
	sw, in := openInput(t, out)
	v := reportVariant(t, in, "test-gpu-differs.k.0=plant-")
	if v.Verification != "pass" || v.Confirmation != string(check.FailParity) || v.Stopped != check.PartConfirmation || !v.ProofViolated {
		t.Errorf("the marked variant: verification %q, confirmation %q, stopped %q, proof violated %v", v.Verification, v.Confirmation, v.Stopped, v.ProofViolated)
	}
	rows, _ := sw.Store.Results(context.Background(), store.Query{Stage: store.StageSummary, Variant: v.Name})
	if len(rows) != 0 {
		t.Errorf("the variant that failed its confirmation was timed: %d measurements", len(rows))
	}
}
