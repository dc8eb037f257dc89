package measure

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		give []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{3}, 3},
		{"odd", []float64{5, 1, 4}, 4},
		{"even", []float64{4, 1, 3, 2}, 2.5},
		{"ties", []float64{2, 2, 1, 9, 2}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.give...)
			if got := median(in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.give, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.give[i] {
					t.Fatalf("median modified its input: %v", in)
				}
			}
		})
	}
}

// TestAnalyzeByHand checks every statistic against values worked out by
// hand for five pairs.
func TestAnalyzeByHand(t *testing.T) {
	// Ratios B/A: .95, 100/110 = .90909, 99/90 = 1.1, .9, 100/105 = .95238;
	// sorted .9 .90909 .95 .95238 1.1, median .95.
	// A sorted 90 100 100 105 110 → 100; B sorted 90 95 99 100 100 → 99.
	// B < A in pairs 0, 1, 3, 4: 4 wins, 1 loss.
	// Position effect: A-first pairs 0, 2, 4 have ratios .95, 1.1, .95238
	// (median 100/105), B-first pairs 1, 3 have .90909, .9 (median their
	// mean); Order = √(100/105 ÷ ((100/110+.9)/2)).
	a := []float64{100, 110, 90, 100, 105}
	b := []float64{95, 100, 99, 90, 100}
	r, err := Analyze(pairsOf(t, a, b), ClockHost, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Stats
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if s.N != 5 || s.Wins != 4 || s.Losses != 1 {
		t.Errorf("N, Wins, Losses = %d, %d, %d, want 5, 4, 1", s.N, s.Wins, s.Losses)
	}
	if s.MedianA != 100*time.Millisecond || s.MedianB != 99*time.Millisecond {
		t.Errorf("medians = %v, %v, want 100ms, 99ms", s.MedianA, s.MedianB)
	}
	near("Ratio", s.Ratio, 0.95)
	near("Change", s.Change, -5)
	near("Gain", s.Gain(), 0.05)
	near("MinRatio", s.MinRatio, 0.9)
	near("MaxRatio", s.MaxRatio, 1.1)
	near("Order", s.Order, math.Sqrt((100.0/105)/((100.0/110+0.9)/2)))
	if !(s.Lo <= s.Ratio && s.Ratio <= s.Hi) || s.Lo < 0.9 || s.Hi > 1.1 {
		t.Errorf("interval [%v, %v] does not hold the median %v inside the pair ratios", s.Lo, s.Hi, s.Ratio)
	}
	if s.Confidence != DefaultConfidence || s.Resamples != DefaultResamples {
		t.Errorf("confidence, resamples = %v, %d, want the defaults", s.Confidence, s.Resamples)
	}
}

func TestWinsIgnoreTies(t *testing.T) {
	r, err := Analyze(pairsOf(t, []float64{10, 10, 10, 10}, []float64{10, 9, 11, 10}), ClockGPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Stats.Wins != 1 || r.Stats.Losses != 1 {
		t.Errorf("wins, losses = %d, %d; want 1, 1 (two ties)", r.Stats.Wins, r.Stats.Losses)
	}
}

// TestBootstrapByHand: for two values the median of a resample of two is
// the lower one (probability 1/4), their mean (1/2) or the upper one
// (1/4), so a 95 % interval is [lower, upper] and a 40 % one (order
// statistics at 30 % and 70 %) is the mean alone.
func TestBootstrapByHand(t *testing.T) {
	x := []float64{1, 2}
	if lo, hi := bootstrap(x, 0.95, 10000, 1); lo != 1 || hi != 2 {
		t.Errorf("95%%: [%v, %v], want [1, 2]", lo, hi)
	}
	if lo, hi := bootstrap(x, 0.40, 10000, 1); lo != 1.5 || hi != 1.5 {
		t.Errorf("40%%: [%v, %v], want [1.5, 1.5]", lo, hi)
	}
	if lo, hi := bootstrap([]float64{3}, 0.95, 10000, 1); lo != 3 || hi != 3 {
		t.Errorf("one value: [%v, %v], want [3, 3]", lo, hi)
	}
	if lo, hi := bootstrap([]float64{7, 7, 7}, 0.95, 100, 1); lo != 7 || hi != 7 {
		t.Errorf("equal values: [%v, %v], want [7, 7]", lo, hi)
	}
}

func TestBootstrapReproducible(t *testing.T) {
	x := []float64{0.95, 0.97, 0.96, 0.99, 0.94, 0.96, 0.98, 0.95, 0.97}
	lo1, hi1 := bootstrap(x, 0.95, 10000, 42)
	lo2, hi2 := bootstrap(x, 0.95, 10000, 42)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("same seed: [%v, %v] then [%v, %v]", lo1, hi1, lo2, hi2)
	}
	differ := false
	for seed := uint64(0); seed < 20 && !differ; seed++ {
		lo, hi := bootstrap(x, 0.95, 200, seed)
		l0, h0 := bootstrap(x, 0.95, 200, seed+100)
		differ = lo != l0 || hi != h0
	}
	if !differ {
		t.Errorf("the seed never changes a 200-resample interval: it is not used")
	}
}

// TestBootstrapCoverage: for pairs with a known true median ratio the 95 %
// interval must contain it in at least 90 % of 200 seeded trials, at the
// default pair count, for normal and for skewed (exponential-tailed)
// noise. The true median of B/A is exactly the ratio: with the same noise
// distribution on both sides, nB/nA and nA/nB have the same
// distribution, so the median of nB/nA is 1.
func TestBootstrapCoverage(t *testing.T) {
	const ratio = 0.96
	noises := map[string]func(r *rand.Rand) float64{
		"normal":      func(r *rand.Rand) float64 { return 1 + 0.01*r.NormFloat64() },
		"skewed tail": func(r *rand.Rand) float64 { return 1 + 0.01*r.ExpFloat64() },
	}
	for name, noise := range noises {
		for _, n := range []int{DefaultPairs, DefaultPairs + 1} {
			covered := 0
			for trial := range 200 {
				rng := rand.New(rand.NewPCG(uint64(trial), uint64(n)))
				ratios := make([]float64, n)
				for i := range ratios {
					env := 1 + 0.05*rng.NormFloat64() // shared by the pair, cancels
					a := 66e6 * env * noise(rng)
					b := 66e6 * ratio * env * noise(rng)
					ratios[i] = b / a
				}
				lo, hi := bootstrap(ratios, 0.95, DefaultResamples, uint64(trial))
				if lo <= ratio && ratio <= hi {
					covered++
				}
			}
			t.Logf("%s noise, %d pairs: %d/200 intervals contain the true ratio", name, n, covered)
			if covered < 180 {
				t.Errorf("%s noise, %d pairs: %d/200 intervals contain the true ratio, want ≥ 180", name, n, covered)
			}
		}
	}
}

func TestDiffSigma(t *testing.T) {
	// Differences all 1: σ = 1/(0.6745·√2).
	got := diffSigma([]float64{1, 2, 1, 2, 1})
	if want := 1 / (0.6744897501960817 * math.Sqrt2); math.Abs(got-want) > 1e-12 {
		t.Errorf("diffSigma = %v, want %v", got, want)
	}
	// One step does not move it.
	if got := diffSigma([]float64{1, 2, 1, 2, 1, 101, 102, 101, 102}); math.Abs(got-1/(0.6744897501960817*math.Sqrt2)) > 1e-12 {
		t.Errorf("diffSigma with a step = %v, want the step ignored", got)
	}
	if got := diffSigma([]float64{5}); got != 0 {
		t.Errorf("diffSigma of one sample = %v, want 0", got)
	}
}

func TestNoiseSigma(t *testing.T) {
	// MAD: median 3, deviations 2 1 0 1 2 → 1; σ = 1.4826.
	if got := madSigma([]float64{1, 2, 3, 4, 5}); math.Abs(got-1.482602218505602) > 1e-12 {
		t.Errorf("madSigma = %v, want 1.4826", got)
	}
	// Two isolated outliers in nine: four of eight successive
	// differences are large, so diffSigma is inflated; the MAD is not,
	// and noiseSigma takes it.
	x := []float64{10, 10.1, 50, 10, 10.1, 10, 50, 10.1, 10}
	if d, m := diffSigma(x), madSigma(x); !(d > 10 && m < 0.2) {
		t.Errorf("diffSigma %v, madSigma %v: want the first inflated, the second not", d, m)
	}
	if got := noiseSigma(x); got != madSigma(x) {
		t.Errorf("noiseSigma = %v, want the MAD's %v", got, madSigma(x))
	}
	// A shift over half the series: the MAD is inflated, successive
	// differences are not.
	y := []float64{10, 10.1, 10, 10.1, 20, 20.1, 20, 20.1, 20}
	if got := noiseSigma(y); got != diffSigma(y) || got > 0.2 {
		t.Errorf("noiseSigma = %v, want diffSigma's %v", got, diffSigma(y))
	}
}

func BenchmarkBootstrap(b *testing.B) {
	x := []float64{0.95, 0.97, 0.96, 0.99, 0.94, 0.96, 0.98, 0.95, 0.97}
	for b.Loop() {
		bootstrap(x, 0.95, DefaultResamples, 1)
	}
}
