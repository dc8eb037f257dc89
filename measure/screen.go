package measure

import (
	"fmt"
	"math"
	"time"
)

// A Screen is the rule that marks a series of pairs contaminated: by
// something else running on the machine, a clock change, throttling. The
// zero value is the default rule (see DefaultScreen); set a field to
// change one threshold.
type Screen struct {
	// Off turns the screen off: nothing is ever flagged.
	Off bool `json:"off,omitempty"`
	// K is how many noise standard deviations a pair must be away from
	// its side's median to count as out of level; 0 means 3.
	K float64 `json:"k,omitempty"`
	// Floor is the smallest relative distance from the median that counts
	// as out of level, whatever the noise; 0 means 0.05 (5 %).
	Floor float64 `json:"floor,omitempty"`
	// Run is how many consecutive out-of-level pairs make a shift; 0
	// means 2.
	Run int `json:"run,omitempty"`
	// MaxNoise is the relative noise above which a side is noisy
	// throughout; 0 means 0.05 (5 %).
	MaxNoise float64 `json:"max_noise,omitempty"`
}

// DefaultScreen is the screen the zero Screen stands for.
var DefaultScreen = Screen{K: 3, Floor: 0.05, Run: 2, MaxNoise: 0.05}

func (s Screen) withDefaults() Screen {
	if s.K == 0 {
		s.K = DefaultScreen.K
	}
	if s.Floor == 0 {
		s.Floor = DefaultScreen.Floor
	}
	if s.Run == 0 {
		s.Run = DefaultScreen.Run
	}
	if s.MaxNoise == 0 {
		s.MaxNoise = DefaultScreen.MaxNoise
	}
	return s
}

func (s Screen) validate() error {
	switch {
	case s.K < 0 || math.IsNaN(s.K) || math.IsInf(s.K, 0):
		return fmt.Errorf("screen: k %v is not a non-negative number", s.K)
	case s.Floor < 0 || math.IsNaN(s.Floor) || math.IsInf(s.Floor, 0):
		return fmt.Errorf("screen: floor %v is not a non-negative number", s.Floor)
	case s.Run < 0:
		return fmt.Errorf("screen: run %d is negative", s.Run)
	case s.MaxNoise < 0 || math.IsNaN(s.MaxNoise) || math.IsInf(s.MaxNoise, 0):
		return fmt.Errorf("screen: max noise %v is not a non-negative number", s.MaxNoise)
	}
	return nil
}

// A FlagKind says what kind of contamination a Flag is.
type FlagKind string

// Flag kinds.
const (
	// FlagShift: both sides left their level together for Run or more
	// consecutive pairs (a contention jump, a clock change).
	FlagShift FlagKind = "shift"
	// FlagNoise: both sides are noisy throughout.
	FlagNoise FlagKind = "noise"
)

// A Flag is one reason a series of pairs is contaminated.
type Flag struct {
	Kind FlagKind `json:"kind"`
	From int      `json:"from"` // first pair concerned (0-based)
	To   int      `json:"to"`   // last pair concerned, inclusive
	Msg  string   `json:"msg"`
}

func (f Flag) String() string { return string(f.Kind) + ": " + f.Msg }

// Check screens pairs and returns why they are contaminated, or nil when
// they are clean. The rule is in the package doc (Contamination).
func (s Screen) Check(pairs []Pair) []Flag {
	flags, _ := s.check(pairs)
	return flags
}

// check returns Check's flags and the pairs out of level on both sides in
// runs too short to be a shift.
func (s Screen) check(pairs []Pair) (flags []Flag, lone []int) {
	if s.Off || len(pairs) == 0 {
		return nil, nil
	}
	s = s.withDefaults()
	a, b := series(pairs)
	ma, mb := median(a), median(b)
	sa, sb := noiseSigma(a), noiseSigma(b)
	if sa > s.MaxNoise*ma && sb > s.MaxNoise*mb {
		flags = append(flags, Flag{
			Kind: FlagNoise, From: 0, To: len(pairs) - 1,
			Msg: fmt.Sprintf("both sides are noisy throughout: A ±%.1f%% (%s–%s), B ±%.1f%% (%s–%s), more than %s",
				100*sa/ma, ms(minOf(a)), ms(maxOf(a)), 100*sb/mb, ms(minOf(b)), ms(maxOf(b)), pct(s.MaxNoise)),
		})
	}
	// out[i] is +1 or -1 when both sides of pair i are out of level in
	// that direction, else 0.
	ta := max(s.K*sa, s.Floor*ma)
	tb := max(s.K*sb, s.Floor*mb)
	out := make([]int, len(pairs))
	for i := range pairs {
		da, db := a[i]-ma, b[i]-mb
		if math.Abs(da) > ta && math.Abs(db) > tb && (da > 0) == (db > 0) {
			out[i] = 1
			if da < 0 {
				out[i] = -1
			}
		}
	}
	for i := 0; i < len(out); {
		if out[i] == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(out) && out[j] == out[i] {
			j++
		}
		if j-i >= s.Run {
			flags = append(flags, shiftFlag(a, b, ma, mb, i, j-1))
		} else {
			for k := i; k < j; k++ {
				lone = append(lone, k)
			}
		}
		i = j
	}
	return flags, lone
}

func shiftFlag(a, b []float64, ma, mb float64, from, to int) Flag {
	pairs := fmt.Sprintf("pairs %d–%d", from, to)
	if from == to {
		pairs = fmt.Sprintf("pair %d", from)
	}
	ra, rb := median(a[from:to+1]), median(b[from:to+1])
	return Flag{
		Kind: FlagShift, From: from, To: to,
		Msg: fmt.Sprintf("%s: both sides moved together, A %s–%s (%+.1f%%) and B %s–%s (%+.1f%%) against medians %s and %s",
			pairs, ms(minOf(a[from:to+1])), ms(maxOf(a[from:to+1])), 100*(ra/ma-1),
			ms(minOf(b[from:to+1])), ms(maxOf(b[from:to+1])), 100*(rb/mb-1), ms(ma), ms(mb)),
	}
}

func series(pairs []Pair) (a, b []float64) {
	a = make([]float64, len(pairs))
	b = make([]float64, len(pairs))
	for i, p := range pairs {
		a[i], b[i] = float64(p.A), float64(p.B)
	}
	return a, b
}

func minOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = min(m, v)
	}
	return m
}

func maxOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// ms formats nanoseconds as milliseconds with three decimals, as the
// seeds' tables do, or in microseconds below a millisecond.
func ms(ns float64) string {
	if ns < float64(time.Millisecond) {
		return fmt.Sprintf("%.3f µs", ns/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.3f ms", ns/float64(time.Millisecond))
}

// pct formats a fraction as a percentage with up to four significant
// digits: 0.03 is "3%".
func pct(f float64) string { return fmt.Sprintf("%.4g%%", 100*f) }

// Validate reports a threshold of s that cannot be applied.
func (s Screen) Validate() error { return s.validate() }
