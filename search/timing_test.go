package search

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"metalab/measure"
	"metalab/search/store"
)

// TestPairsWrittenAsTaken requires each pair in the store as soon as its
// second sample is taken, before the next sample runs: a sweep killed in
// the middle of a measurement loses at most the pair under way.
func TestPairsWrittenAsTaken(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "r.db"), store.Plan{Baseline: sha([]byte("b")), JSON: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k := store.Key{Variant: st.Baseline(), Backend: "fake", Device: "none", Case: "c", Phase: PhaseExplore}
	id, err := st.Begin(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	w := &sweep{st: st, res: &Result{}}
	pw := &pairWriter{w: w, id: id, warmup: 1}
	calls := 0
	sampler := func(ctx context.Context) (measure.Sample, error) {
		// Before sample n (after the two warm-ups), the store holds every
		// pair completed so far.
		if j := calls - 2; j >= 0 {
			got, err := st.Samples(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 * (j / 2); len(got) != want {
				t.Errorf("before sample %d the store holds %d samples, want %d", calls, len(got), want)
			}
		}
		calls++
		return measure.Sample{Dur: time.Millisecond, Clock: measure.ClockHost}, nil
	}
	r, err := measure.Paired(ctx, pw.wrap(store.SideA, sampler), pw.wrap(store.SideB, sampler), measure.Options{Warmup: 1, Pairs: 4, MaxReruns: -1})
	if err != nil || pw.err != nil {
		t.Fatal(err, pw.err)
	}
	got, _ := st.Samples(ctx, id)
	if len(got) != 8 || r.Stats.N != 4 {
		t.Fatalf("%d samples stored for %d pairs", len(got), r.Stats.N)
	}
	// The stored pairs are the result's: sides, order in the pair and
	// durations.
	pairs, _, err := pairsOf(got)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		if want := r.Pairs()[i]; p != want {
			t.Errorf("pair %d stored as %+v, measured as %+v", i, p, want)
		}
	}
}
