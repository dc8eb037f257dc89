package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"testing"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

var (
	baseSHA  = sha("baseline source")
	testPlan = Plan{Baseline: baseSHA, JSON: json.RawMessage(`{"strategy": "ablate", "cases": ["pos0=0", "pos0=30000"], "pairs": 7}`)}
)

func openTest(t *testing.T, path string, p Plan) *Store {
	t.Helper()
	s, err := Open(path, p)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tempStore(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	return openTest(t, path, testPlan), path
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func key(variant, c string) Key {
	return Key{Variant: variant, Backend: "cpu", Device: "x86-64 emulator", Case: c}
}

// measure records one complete measurement of k with pairs pairs whose
// durations start at a and b ns, and returns its id.
func measure(t *testing.T, s *Store, k Key, pairs int, a, b int64, contaminated bool) string {
	t.Helper()
	ctx := context.Background()
	id, err := s.Begin(ctx, k)
	must(t, err)
	for p := 0; p < pairs; p++ {
		must(t, s.PutSamples(ctx, id,
			Sample{Pair: p, Side: SideA, Order: p % 2, NS: a + int64(p), Clock: "cpu-monotonic"},
			Sample{Pair: p, Side: SideB, Order: 1 - p%2, NS: b + int64(p), Clock: "cpu-monotonic"}))
	}
	r := float64(b) / float64(a)
	var flags []string
	if contaminated {
		flags = []string{"jump: last 2 pairs 30% slower"}
	}
	must(t, s.PutSummary(ctx, id, Summary{Pairs: pairs, MedianA: float64(a), MedianB: float64(b), Ratio: r,
		CILow: r - 0.01, CIHigh: r + 0.01, CILevel: 0.95, RatioMin: r - 0.02, RatioMax: r + 0.02,
		Contaminated: contaminated, Flags: flags}))
	return id
}
