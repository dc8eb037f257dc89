package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestConfirmations records a variant's confirmations on the timing
// backend, before timing and after a measurement, and reads, queries and
// merges them back.
func TestConfirmations(t *testing.T) {
	ctx := context.Background()
	s, path := tempStore(t)
	v := sha("variant one")
	must(t, s.PutVariant(ctx, Variant{SHA256: v, Name: "one", Refs: []string{"unroll/k/0-abcdef=by2"}}))
	k := Key{Variant: v, Backend: "cuda", Device: "NVIDIA H200", Case: "quick/C=1"}
	must(t, s.PutConfirmation(ctx, k, Confirmation{Status: "pass"}))
	after := k
	after.Phase = "explore"
	if err := s.PutConfirmation(ctx, after, Confirmation{Status: "pass"}); err == nil {
		t.Error("a check after timing was recorded without its measurement")
	}
	// Two attempts of one measurement, each with the check after it.
	sum := Summary{Pairs: 1, MedianA: 1, MedianB: 1, Ratio: 1, CILow: 1, CIHigh: 1, CILevel: 0.95, RatioMin: 1, RatioMax: 1}
	for _, st := range []string{"pass", "fail-after-timing"} {
		id, err := s.Begin(ctx, after)
		must(t, err)
		must(t, s.PutSamples(ctx, id, Sample{Pair: 0, Side: SideA, NS: 5, Clock: "gpu"}, Sample{Pair: 0, Side: SideB, Order: 1, NS: 5, Clock: "gpu"}))
		must(t, s.PutSummaryAfter(ctx, id, sum, Confirmation{Status: st, Message: "buffer out differs"}))
	}
	if err := s.PutConfirmation(ctx, k, Confirmation{Status: "fail-parity"}); !errors.Is(err, ErrExists) {
		t.Errorf("a second confirmation of one key: %v, want ErrExists", err)
	}
	if err := s.PutConfirmation(ctx, Key{Variant: v, Backend: "cuda"}, Confirmation{Status: "pass"}); err == nil {
		t.Error("a confirmation without a case was recorded")
	}
	if c, ok, err := s.Confirmation(ctx, k); err != nil || !ok || c.Status != "pass" || c.Measurement != "" {
		t.Errorf("Confirmation(before) = %+v, %v, %v", c, ok, err)
	}
	cs, err := s.AfterTiming(ctx, after)
	if err != nil || len(cs) != 2 || cs[0].Status != "pass" || cs[1].Status != "fail-after-timing" || cs[1].Measurement == "" || cs[1].Message != "buffer out differs" {
		t.Errorf("AfterTiming = %+v, %v; want a pass, then the failure, each with its measurement", cs, err)
	}
	if _, ok, _ := s.Confirmation(ctx, Key{Variant: v, Backend: "cpu", Device: "NVIDIA H200", Case: "quick/C=1"}); ok {
		t.Error("a confirmation on cuda reads back as the cpu backend's")
	}
	rows, err := s.Results(ctx, Query{Stage: StageConfirm, Status: "fail-after-timing"})
	if err != nil || len(rows) != 1 || rows[0].Phase != "explore" || rows[0].Confirm == nil || rows[0].Name != "one" {
		t.Fatalf("query of the failures after timing = %+v, %v", rows, err)
	}
	s.Close()

	dst := filepath.Join(t.TempDir(), "merged.db")
	must(t, Merge(dst, path))
	must(t, Merge(dst, path)) // idempotent
	m, err := OpenExisting(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rows, err = m.Results(ctx, Query{Stage: StageConfirm})
	if err != nil || len(rows) != 3 {
		t.Errorf("merged confirmations = %+v, %v; want all three", rows, err)
	}
}

// TestSchemaOneStore opens a store written before confirmations were kept
// (schema version 1): read-only it reads as it is, with no confirmations;
// opened for writing it is migrated and records them.
func TestSchemaOneStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	saved := migrations
	migrations = migrations[:1]
	old := openTest(t, path, testPlan)
	v := sha("variant one")
	must(t, old.PutVariant(ctx, Variant{SHA256: v, Name: "one"}))
	must(t, old.PutCheck(ctx, key(v, "quick/C=1"), Check{Status: "pass"}))
	old.Close()
	migrations = saved

	r, err := OpenExisting(path)
	if err != nil {
		t.Fatalf("OpenExisting of a schema 1 store: %v", err)
	}
	if r.SchemaVersion() != 1 {
		t.Errorf("schema version %d, want 1", r.SchemaVersion())
	}
	rows, err := r.Results(ctx, Query{})
	if err != nil {
		t.Fatalf("Results of a schema 1 store: %v", err)
	}
	var checks int
	for _, row := range rows {
		switch row.Stage {
		case StageCheck:
			checks++
		case StageConfirm:
			t.Errorf("a schema 1 store lists a confirmation: %+v", row)
		}
	}
	if checks != 1 {
		t.Errorf("%d checks read back, want 1", checks)
	}
	if _, ok, err := r.Confirmation(ctx, Key{Variant: v, Backend: "cpu", Device: "x", Case: "quick/C=1"}); ok || err != nil {
		t.Errorf("Confirmation on a schema 1 store: %v, %v", ok, err)
	}
	dst := filepath.Join(t.TempDir(), "merged.db")
	if err := Merge(dst, path); err != nil {
		t.Errorf("merging a schema 1 store: %v", err)
	}
	r.Close()

	w := openTest(t, path, testPlan)
	if w.SchemaVersion() != len(migrations) {
		t.Errorf("after Open the schema is version %d, want %d", w.SchemaVersion(), len(migrations))
	}
	must(t, w.PutConfirmation(ctx, Key{Variant: v, Backend: "cpu", Device: "x", Case: "quick/C=1"}, Confirmation{Status: "pass"}))
}
