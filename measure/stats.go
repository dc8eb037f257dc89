package measure

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Stats are the statistics of one attempt's pairs. Ratios are B/A: below 1
// means B is faster.
type Stats struct {
	N       int           `json:"n"` // complete pairs
	MedianA time.Duration `json:"median_a_ns"`
	MedianB time.Duration `json:"median_b_ns"`
	// Ratio is the median over pairs of B/A, the figure decisions use.
	Ratio float64 `json:"ratio"`
	// Lo and Hi bound Ratio's percentile bootstrap interval at level
	// Confidence, from Resamples resamples of the pairs drawn with Seed.
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	Resamples  int     `json:"resamples"`
	Seed       uint64  `json:"seed"`
	// Change is (Ratio-1)·100: negative when B is faster.
	Change float64 `json:"change_pct"`
	Wins   int     `json:"wins"`   // pairs with B < A
	Losses int     `json:"losses"` // pairs with B > A
	// MinRatio and MaxRatio are the extreme per-pair ratios.
	MinRatio float64 `json:"min_ratio"`
	MaxRatio float64 `json:"max_ratio"`
	// Order is the position effect: how much slower running second in a
	// pair is than running first, as a ratio (above 1: second is slower).
	// With a true ratio R and a position factor p, pairs run A first
	// show B/A = R·p and pairs run B first show R/p, so Order is
	// √(median B/A of the A-first pairs ÷ median B/A of the B-first
	// ones). The alternation cancels it in Ratio, but it widens the
	// interval. 1 when either kind of pair is missing.
	Order float64 `json:"order"`
	// NoiseA and NoiseB are each side's relative noise: the robust
	// standard deviation the screen uses (see Contamination in the
	// package doc) over the side's median.
	NoiseA float64 `json:"noise_a"`
	NoiseB float64 `json:"noise_b"`
}

// Gain returns the median relative gain of B over A, 1-Ratio: 0.04 when B
// takes 4 % less time.
func (s Stats) Gain() float64 { return 1 - s.Ratio }

// analyze computes the statistics of pairs. Precondition: every duration
// is positive.
func analyze(pairs []Pair, conf float64, resamples int, seed uint64) Stats {
	s := Stats{N: len(pairs), Confidence: conf, Resamples: resamples, Seed: seed}
	if len(pairs) == 0 {
		return s
	}
	a := make([]float64, len(pairs))
	b := make([]float64, len(pairs))
	ratios := make([]float64, len(pairs))
	var aFirst, bFirst []float64
	for i, p := range pairs {
		a[i], b[i] = float64(p.A), float64(p.B)
		ratios[i] = b[i] / a[i]
		if p.AFirst {
			aFirst = append(aFirst, ratios[i])
		} else {
			bFirst = append(bFirst, ratios[i])
		}
		switch {
		case p.B < p.A:
			s.Wins++
		case p.B > p.A:
			s.Losses++
		}
	}
	s.MedianA = time.Duration(math.Round(median(a)))
	s.MedianB = time.Duration(math.Round(median(b)))
	s.Ratio = median(ratios)
	s.Change = (s.Ratio - 1) * 100
	s.MinRatio, s.MaxRatio = slices.Min(ratios), slices.Max(ratios)
	s.Order = 1
	if len(aFirst) > 0 && len(bFirst) > 0 {
		s.Order = math.Sqrt(median(aFirst) / median(bFirst))
	}
	s.NoiseA = relNoise(a)
	s.NoiseB = relNoise(b)
	s.Lo, s.Hi = bootstrap(ratios, conf, resamples, seed)
	return s
}

// median returns the median of x (the mean of the middle two for an even
// count), or 0 for none. It does not modify x.
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return sortedMedian(s)
}

func sortedMedian(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// bootstrap returns the percentile bootstrap interval at level conf for
// the median of x: the median of each of resamples resamples of x (drawn
// with replacement by a PCG generator seeded with seed), sorted, and the
// order statistics at ⌊B·α/2⌋ and ⌈B·(1-α/2)⌉-1 (nearest rank, no
// interpolation). The same x, conf, resamples and seed always give the
// same interval.
func bootstrap(x []float64, conf float64, resamples int, seed uint64) (lo, hi float64) {
	n := len(x)
	if n == 1 || resamples <= 0 {
		m := median(x)
		return m, m
	}
	rng := rand.NewPCG(seed, 0x6d65617375726521) // "measure!"
	meds := make([]float64, resamples)
	buf := make([]float64, n)
	for r := range meds {
		for i := range buf {
			// Lemire's multiply-shift: an index in [0, n) from the
			// top 32 bits, with a bias of at most n/2³² — nothing for
			// a few dozen pairs, and fixed by the generator's output
			// alone, so the interval does not depend on the Go
			// release.
			buf[i] = x[(rng.Uint64()>>32)*uint64(n)>>32]
		}
		insertionSort(buf)
		meds[r] = sortedMedian(buf)
	}
	slices.Sort(meds)
	alpha := 1 - conf
	il := int(math.Floor(float64(resamples) * alpha / 2))
	ih := int(math.Ceil(float64(resamples)*(1-alpha/2))) - 1
	il = min(max(il, 0), resamples-1)
	ih = min(max(ih, il), resamples-1)
	return meds[il], meds[ih]
}

// insertionSort sorts a short slice in place; resamples are a few dozen
// values, where it beats the general sort.
func insertionSort(x []float64) {
	for i := 1; i < len(x); i++ {
		v := x[i]
		j := i
		for j > 0 && x[j-1] > v {
			x[j] = x[j-1]
			j--
		}
		x[j] = v
	}
}

// diffSigma estimates the standard deviation of the noise in a series
// from its successive differences: the median of |x[i]-x[i-1]| over
// 0.6745·√2 (for independent normal noise the difference of two samples
// has standard deviation σ√2, and the median of its absolute value is
// 0.6745 of that). A level shift adds one large difference, which the
// median ignores, so the estimate stays that of the noise around it.
// It is 0 for fewer than two samples.
func diffSigma(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	d := make([]float64, len(x)-1)
	for i := 1; i < len(x); i++ {
		d[i-1] = math.Abs(x[i] - x[i-1])
	}
	return median(d) / (0.6744897501960817 * math.Sqrt2)
}

// madSigma estimates the standard deviation of the noise in a series
// from its median absolute deviation from the median, times 1.4826 (the
// factor that makes it σ for normal noise). Isolated outliers count once
// each, so it ignores up to half the series being outliers; but a level
// shift covering much of the series inflates it.
func madSigma(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	m := median(x)
	d := make([]float64, len(x))
	for i, v := range x {
		d[i] = math.Abs(v - m)
	}
	return 1.482602218505602 * median(d)
}

// noiseSigma is the noise estimate the screen uses: the smaller of
// diffSigma, which a level shift disturbs by one difference only, and
// madSigma, which an isolated outlier disturbs by one deviation only
// (where it disturbs two successive differences). For plain noise both
// estimate σ.
func noiseSigma(x []float64) float64 { return min(diffSigma(x), madSigma(x)) }

// relNoise returns noiseSigma(x) over the median of x.
func relNoise(x []float64) float64 {
	m := median(x)
	if m == 0 {
		return 0
	}
	return noiseSigma(x) / m
}
