package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Clocks a Sample's duration can come from.
const (
	// ClockGPU: device timestamps (CUDA events, a Metal command buffer's
	// GPUStartTime and GPUEndTime).
	ClockGPU = "gpu"
	// ClockHost: a clock on the host around the dispatches (the runner's
	// or the tool's), which includes submission and, for the cpu
	// backend, the emulator.
	ClockHost = "host"
)

// A Sample is one timed run of one side: the dispatches of one sample
// submitted together (Options.Dispatches, the seeds' "layers"), and the
// clock that timed them.
type Sample struct {
	Dur   time.Duration `json:"ns"`
	Clock string        `json:"clock"` // ClockGPU or ClockHost
}

// A Sampler takes one timing sample of one side. It must time the same
// work on every call and return an error (a crash, a timeout) rather than
// a made-up duration; it should return promptly when ctx is done.
//
// Precondition: the caller has already run each side once, untimed, and
// checked its output; measure only times.
type Sampler func(ctx context.Context) (Sample, error)

// Defaults for the zero Options.
const (
	DefaultWarmup     = 1
	DefaultPairs      = 9
	DefaultConfidence = 0.95
	DefaultResamples  = 10000
	DefaultMaxReruns  = 2
)

// Options control a paired measurement. The zero value measures 9 pairs
// after one warm-up per side, with a 95 % interval from 10000 resamples
// and up to two re-runs when contaminated.
type Options struct {
	// Warmup is the number of untimed-for-statistics samples per side
	// before each attempt's pairs (kept in Attempt.Runs); 0 means
	// DefaultWarmup, negative means none.
	Warmup int `json:"warmup"`
	// Pairs is the number of pairs per attempt; 0 means DefaultPairs.
	Pairs int `json:"pairs"`
	// Confidence is the level of the ratio's interval, in (0, 1); 0
	// means DefaultConfidence.
	Confidence float64 `json:"confidence"`
	// Resamples is the number of bootstrap resamples; 0 means
	// DefaultResamples.
	Resamples int `json:"resamples"`
	// Seed seeds the bootstrap, so that the same samples always give the
	// same interval.
	Seed uint64 `json:"seed"`
	// MaxReruns is how many times a contaminated attempt is measured
	// again; 0 means DefaultMaxReruns, negative means never.
	MaxReruns int `json:"max_reruns"`
	// RerunWait is a pause before each re-run, to let whatever
	// contaminated the last attempt finish; 0 means none.
	RerunWait time.Duration `json:"rerun_wait_ns,omitempty"`
	// Screen is the contamination rule.
	Screen Screen `json:"screen"`
	// Label says what the timing is, e.g. "cpu emulator time: exercises
	// the loop, not a GPU claim". measure carries and prints it.
	Label string `json:"label,omitempty"`
	// Dispatches is the number of dispatches in one sample, recorded
	// with the result; 0 means not said.
	Dispatches int `json:"dispatches,omitempty"`
	// A and B name the sides; "" means "baseline" and "variant" (for a
	// Control, B defaults to A's name).
	A string `json:"a,omitempty"`
	B string `json:"b,omitempty"`
}

func (o Options) withDefaults(control bool) (Options, error) {
	if o.Warmup == 0 {
		o.Warmup = DefaultWarmup
	}
	o.Warmup = max(o.Warmup, 0)
	if o.Pairs == 0 {
		o.Pairs = DefaultPairs
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.MaxReruns == 0 {
		o.MaxReruns = DefaultMaxReruns
	}
	o.MaxReruns = max(o.MaxReruns, 0)
	if o.A == "" {
		o.A = "baseline"
	}
	if o.B == "" {
		o.B = "variant"
		if control {
			o.B = o.A
		}
	}
	switch {
	case o.Pairs < 0:
		return o, fmt.Errorf("pairs %d is negative", o.Pairs)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return o, fmt.Errorf("confidence %v is not in (0, 1)", o.Confidence)
	case o.Resamples < 0:
		return o, fmt.Errorf("resamples %d is negative", o.Resamples)
	case o.Dispatches < 0:
		return o, fmt.Errorf("dispatches %d is negative", o.Dispatches)
	case o.RerunWait < 0:
		return o, fmt.Errorf("rerun wait %v is negative", o.RerunWait)
	}
	if err := o.Screen.validate(); err != nil {
		return o, err
	}
	return o, nil
}

// A Side is one side of a paired measurement.
type Side string

// The sides: A is the baseline, B the candidate (the baseline again in a
// Control).
const (
	SideA Side = "A"
	SideB Side = "B"
)

// A Run is one sample as it was taken.
type Run struct {
	Side   Side `json:"side"`
	Warmup bool `json:"warmup,omitempty"`
	// Index is the pair's index, or the warm-up's.
	Index int `json:"index"`
	Sample
}

// A Pair is one A sample and one B sample taken back to back.
type Pair struct {
	A      time.Duration `json:"a_ns"`
	B      time.Duration `json:"b_ns"`
	AFirst bool          `json:"a_first"`
}

// An Attempt is one measurement: warm-ups, then pairs.
type Attempt struct {
	// Runs is every sample in the order taken: warm-ups, pairs and the
	// first half of a pair cut short. Nil for results made by Analyze.
	Runs  []Run  `json:"runs,omitempty"`
	Pairs []Pair `json:"pairs"` // complete pairs, in order
	Want  int    `json:"want"`  // pairs asked for
	Flags []Flag `json:"flags,omitempty"`
}

// A Result is a paired measurement. Its figures (Stats, Flags,
// Contaminated, Complete) are those of its last attempt; earlier attempts
// were contaminated, and are kept with every sample they took.
type Result struct {
	Label      string `json:"label,omitempty"`
	A          string `json:"a"`
	B          string `json:"b"`
	Control    bool   `json:"control,omitempty"` // A and B are the same sampler
	Clock      string `json:"clock"`
	Dispatches int    `json:"dispatches,omitempty"`
	// Complete reports whether the last attempt ran all its pairs.
	Complete bool `json:"complete"`
	// Contaminated reports whether the last attempt (and so every
	// attempt) was contaminated; Flags say why. A contaminated result
	// must not decide anything.
	Contaminated bool      `json:"contaminated"`
	Flags        []Flag    `json:"flags,omitempty"`
	Stats        Stats     `json:"stats"`
	Notes        []string  `json:"notes,omitempty"`
	Attempts     []Attempt `json:"attempts"`
}

// Pairs returns the pairs of the reported (last) attempt.
func (r *Result) Pairs() []Pair {
	if len(r.Attempts) == 0 {
		return nil
	}
	return r.Attempts[len(r.Attempts)-1].Pairs
}

// Usable returns nil when r may support a decision, or why not: it is
// nil, contaminated, or cut short.
func (r *Result) Usable() error {
	switch {
	case r == nil:
		return errors.New("no result")
	case r.Contaminated:
		msgs := make([]string, len(r.Flags))
		for i, f := range r.Flags {
			msgs[i] = f.String()
		}
		return fmt.Errorf("contaminated in all %d attempts; last: %s", len(r.Attempts), strings.Join(msgs, "; "))
	case !r.Complete:
		want := 0
		if len(r.Attempts) > 0 {
			want = r.Attempts[len(r.Attempts)-1].Want
		}
		return fmt.Errorf("cut short after %d of %d pairs", r.Stats.N, want)
	}
	return nil
}

// Paired measures b against a: per attempt, Options.Warmup warm-up
// samples per side (warm-up i runs A then B), then Options.Pairs pairs
// that alternate which side runs first — A first in even pairs, B first
// in odd ones (A B, B A, A B, ...) — so that a position effect (the
// second run finding warm caches, or a clock ramping up) falls on both
// sides equally. If the screen finds the attempt contaminated, Paired
// measures again, up to Options.MaxReruns times, and says in Notes what
// each attempt found.
//
// The caller runs each side once, untimed, and checks its output before
// calling Paired.
//
// When ctx is done or a sampler fails, Paired returns the result so far
// (every sample taken, statistics over the complete pairs of the last
// attempt, Complete false) with the error; a context's error is wrapped,
// so errors.Is(err, context.Canceled) works. Bad options or a sample
// with a non-positive duration, an unknown clock or a clock different
// from the others is an error.
func Paired(ctx context.Context, a, b Sampler, opts Options) (*Result, error) {
	return paired(ctx, a, b, opts, false)
}

// Control measures a against itself: a baseline-vs-baseline run, with
// the same options as the candidates it vouches for. Its median ratio
// should be 1; how far its interval reaches from 1 (Spread) is the
// smallest difference the measurement can resolve. Run one before and one
// after the candidates and compare them with Drift.
func Control(ctx context.Context, a Sampler, opts Options) (*Result, error) {
	return paired(ctx, a, a, opts, true)
}

func paired(ctx context.Context, a, b Sampler, opts Options, control bool) (*Result, error) {
	o, err := opts.withDefaults(control)
	if err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	if a == nil || b == nil {
		return nil, errors.New("measure: nil sampler")
	}
	r := &Result{Label: o.Label, A: o.A, B: o.B, Control: control, Dispatches: o.Dispatches}
	tries := o.MaxReruns + 1
	for i := 1; i <= tries; i++ {
		if i > 1 && o.RerunWait > 0 {
			t := time.NewTimer(o.RerunWait)
			select {
			case <-ctx.Done():
				t.Stop()
				r.finish(o)
				return r, fmt.Errorf("measure: stopped before attempt %d: %w", i, ctx.Err())
			case <-t.C:
			}
		}
		r.Attempts = append(r.Attempts, Attempt{Want: o.Pairs})
		at := &r.Attempts[len(r.Attempts)-1]
		err := r.attempt(ctx, at, a, b, o)
		at.Flags = o.Screen.Check(at.Pairs)
		if err != nil {
			r.finish(o)
			return r, err
		}
		if len(at.Flags) == 0 {
			if i > 1 {
				r.Notes = append(r.Notes, fmt.Sprintf("attempt %d of %d: clean", i, tries))
			}
			break
		}
		verdict := "measuring again"
		if i == tries {
			verdict = "no attempts left: this result must not decide anything"
		}
		r.Notes = append(r.Notes, fmt.Sprintf("attempt %d of %d: contaminated: %s; %s", i, tries, flagText(at.Flags), verdict))
	}
	r.finish(o)
	return r, nil
}

// attempt takes one attempt's samples into at.
func (r *Result) attempt(ctx context.Context, at *Attempt, a, b Sampler, o Options) error {
	take := func(side Side, warm bool, idx int) (time.Duration, error) {
		what := fmt.Sprintf("pair %d", idx)
		if warm {
			what = fmt.Sprintf("warm-up %d", idx)
		}
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("measure: stopped at %s after %d of %d pairs: %w", what, len(at.Pairs), at.Want, err)
		}
		f, name := a, r.A
		if side == SideB {
			f, name = b, r.B
		}
		s, err := f(ctx)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
				err = fmt.Errorf("%w (%w)", cerr, err)
			}
			return 0, fmt.Errorf("measure %s (%s), %s: %w", name, side, what, err)
		}
		switch {
		case s.Dur <= 0:
			return 0, fmt.Errorf("measure %s (%s), %s: non-positive duration %v", name, side, what, s.Dur)
		case s.Clock != ClockGPU && s.Clock != ClockHost:
			return 0, fmt.Errorf("measure %s (%s), %s: clock %q is neither %q nor %q", name, side, what, s.Clock, ClockGPU, ClockHost)
		case r.Clock == "":
			r.Clock = s.Clock
		case s.Clock != r.Clock:
			return 0, fmt.Errorf("measure %s (%s), %s: clock %q after samples timed by %q", name, side, what, s.Clock, r.Clock)
		}
		at.Runs = append(at.Runs, Run{Side: side, Warmup: warm, Index: idx, Sample: s})
		return s.Dur, nil
	}
	for w := range o.Warmup {
		for _, side := range []Side{SideA, SideB} {
			if _, err := take(side, true, w); err != nil {
				return err
			}
		}
	}
	for i := range o.Pairs {
		first, second := SideA, SideB
		if i%2 == 1 {
			first, second = SideB, SideA
		}
		d1, err := take(first, false, i)
		if err != nil {
			return err
		}
		d2, err := take(second, false, i)
		if err != nil {
			return err
		}
		p := Pair{A: d1, B: d2, AFirst: true}
		if first == SideB {
			p = Pair{A: d2, B: d1}
		}
		at.Pairs = append(at.Pairs, p)
	}
	return nil
}

// finish fills r's figures from its last attempt.
func (r *Result) finish(o Options) {
	at := r.Attempts[len(r.Attempts)-1]
	r.Complete = len(at.Pairs) == at.Want
	r.Flags = at.Flags
	r.Contaminated = len(at.Flags) > 0
	r.Stats = analyze(at.Pairs, o.Confidence, o.Resamples, o.Seed)
	r.Notes = append(r.Notes, observe(at.Pairs, r.Stats, o)...)
}

// observe returns notes on things worth a look that do not contaminate a
// result: lone outliers, a position effect, one noisy side.
func observe(pairs []Pair, s Stats, o Options) []string {
	var notes []string
	scr := o.Screen.withDefaults()
	if _, lone := o.Screen.check(pairs); len(lone) > 0 {
		var parts []string
		for _, i := range lone {
			parts = append(parts, fmt.Sprintf("pair %d (A %s, B %s)", i, ms(float64(pairs[i].A)), ms(float64(pairs[i].B))))
		}
		notes = append(notes, "outliers on both sides, fewer in a row than a shift, which the medians set aside: "+strings.Join(parts, ", "))
	}
	if s.N >= 2 && !o.Screen.Off && math.Abs(s.Order-1) > scr.Floor/2 {
		dir := "slower"
		if s.Order < 1 {
			dir = "faster"
		}
		notes = append(notes, fmt.Sprintf("running second is %.1f%% %s than running first; alternation cancels it in the ratio but it widens the interval",
			100*math.Abs(s.Order-1), dir))
	}
	if s.N >= 3 && !o.Screen.Off {
		na, nb := s.NoiseA > scr.MaxNoise, s.NoiseB > scr.MaxNoise
		switch {
		case na && !nb:
			notes = append(notes, fmt.Sprintf("A is noisy (±%.1f%%) while B is not (±%.1f%%)", 100*s.NoiseA, 100*s.NoiseB))
		case nb && !na:
			notes = append(notes, fmt.Sprintf("B is noisy (±%.1f%%) while A is not (±%.1f%%): the candidate's own timing varies", 100*s.NoiseB, 100*s.NoiseA))
		}
	}
	return notes
}

func flagText(flags []Flag) string {
	msgs := make([]string, len(flags))
	for i, f := range flags {
		msgs[i] = f.String()
	}
	return strings.Join(msgs, "; ")
}

// Analyze computes a Result from pairs measured earlier (a results store
// keeps the raw pairs; this gives back the same figures): one attempt, no
// runs, screened and with statistics as Paired computes them. Only the
// statistical and naming fields of opts are used. Every duration must be
// positive and clock must be ClockGPU or ClockHost.
func Analyze(pairs []Pair, clock string, opts Options) (*Result, error) {
	o, err := opts.withDefaults(false)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	if clock != ClockGPU && clock != ClockHost {
		return nil, fmt.Errorf("analyze: clock %q is neither %q nor %q", clock, ClockGPU, ClockHost)
	}
	for i, p := range pairs {
		if p.A <= 0 || p.B <= 0 {
			return nil, fmt.Errorf("analyze: pair %d: non-positive duration (A %v, B %v)", i, p.A, p.B)
		}
	}
	r := &Result{Label: o.Label, A: o.A, B: o.B, Clock: clock, Dispatches: o.Dispatches}
	at := Attempt{Pairs: append([]Pair(nil), pairs...), Want: len(pairs)}
	at.Flags = o.Screen.Check(at.Pairs)
	r.Attempts = []Attempt{at}
	r.finish(o)
	return r, nil
}

// Spread returns how far r's interval reaches from a ratio of 1: the
// larger of 1-Lo and Hi-1. For a Control it is the smallest relative
// difference the measurement can tell from noise.
func (r *Result) Spread() float64 {
	return max(1-r.Stats.Lo, r.Stats.Hi-1, 0)
}
