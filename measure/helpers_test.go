package measure

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// msd converts milliseconds to a Duration, rounded to the nanosecond.
func msd(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

// pairsOf makes pairs from two series in milliseconds, alternating the
// order as Paired does.
func pairsOf(t *testing.T, a, b []float64) []Pair {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("series of %d and %d samples", len(a), len(b))
	}
	p := make([]Pair, len(a))
	for i := range a {
		p[i] = Pair{A: msd(a[i]), B: msd(b[i]), AFirst: i%2 == 0}
	}
	return p
}

// synth returns a Result for n pairs of a baseline at base ms and a
// candidate at ratio·base, each pair sharing an environment factor (1 %)
// and each sample with its own relative noise, drawn from seed.
func synth(t *testing.T, base, ratio, noise float64, n int, seed uint64) *Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	a := make([]float64, n)
	b := make([]float64, n)
	for i := range a {
		env := 1 + 0.01*rng.NormFloat64()
		a[i] = base * env * (1 + noise*rng.NormFloat64())
		b[i] = base * ratio * env * (1 + noise*rng.NormFloat64())
	}
	r, err := Analyze(pairsOf(t, a, b), ClockGPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The seeds' series, in milliseconds.
var (
	// confirm_8192: a contention jump in the last two pairs (80–88 ms
	// after 63–66 ms), both sides together.
	seedShiftA = []float64{66.31, 66.12, 66.45, 66.29, 66.20, 66.38, 66.25, 84.70, 87.90}
	seedShiftB = []float64{63.78, 63.91, 63.70, 63.84, 63.65, 63.79, 63.88, 80.40, 82.60}
	// confirm_30000: contaminated throughout, 99–133 ms.
	seedNoisyA = []float64{109.3, 124.8, 99.6, 131.2, 104.1, 118.7, 101.9}
	seedNoisyB = []float64{112.9, 99.2, 127.4, 105.3, 133.0, 100.8, 121.6}
	// A quiet baseline at 66.190 ms with ±0.5 % noise.
	tightA = []float64{66.19, 66.41, 65.98, 66.30, 66.05, 66.36, 66.12, 66.27, 66.02}
	tightB = []float64{66.25, 66.08, 66.39, 65.99, 66.31, 66.14, 66.40, 66.03, 66.22}
)

// scaled returns x times f.
func scaled(x []float64, f float64) []float64 {
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] * f
	}
	return y
}
