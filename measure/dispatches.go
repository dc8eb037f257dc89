package measure

import (
	"math"
	"time"
)

// MinSampleTime is the shortest sample a measurement can be trusted to
// time on a machine that runs other work: below it, the scheduler's and
// the clock's noise is a large part of every sample, and a measurement is
// contaminated more often than it is not. More dispatches per sample make
// a sample longer.
const MinSampleTime = time.Millisecond

// SuggestDispatches returns the dispatches per sample that would make a
// sample whose median is median, taken with dispatches per sample, last
// at least floor (MinSampleTime when 0), rounded up to 1, 2 or 5 times a
// power of ten; 0 when the samples are that long already, or median or
// dispatches says nothing.
func SuggestDispatches(median time.Duration, dispatches int, floor time.Duration) int {
	if floor <= 0 {
		floor = MinSampleTime
	}
	if median <= 0 || dispatches < 1 || median >= floor {
		return 0
	}
	per := float64(median) / float64(dispatches)
	n := math.Ceil(float64(floor) / per)
	for p := 1.0; ; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if m*p >= n && m*p > float64(dispatches) {
				return int(m * p)
			}
		}
		if p > 1e9 {
			return int(n)
		}
	}
}
