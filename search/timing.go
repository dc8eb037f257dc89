package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"metalab/backend"
	"metalab/check"
	"metalab/measure"
	"metalab/search/store"
	"metalab/spec"
)

// Phases of the measurements and decisions a sweep records. Controls
// (the baseline against itself) are recorded under the baseline's sha256
// in the phases explore, before and after.
const (
	PhaseExplore = "explore" // a variant at the explore case; a control before exploring
	PhaseConfirm = "confirm" // a variant at every timed case
	PhaseBefore  = "before"  // the control at the target case before confirming
	PhaseAfter   = "after"   // the control at the target case after confirming
	PhaseDecide  = "decide"  // the rule's verdict on a variant
)

// confirmPhase is the phase of the i-th (from 1) confirmation at the
// target case.
func confirmPhase(i int) string { return fmt.Sprintf("confirmation-%d", i) }

// stagesToRun is how many of a case's stages a timing sample runs: up to
// the last timed one.
func (w *sweep) stagesToRun(in *spec.Instance) (n int, timed []bool) {
	timed = make([]bool, len(in.Stages))
	for i, st := range in.Stages {
		if slices.Contains(w.plan.TimedStages, st.Entry) {
			timed[i] = true
			n = i + 1
		}
	}
	if n == 0 {
		for i := range timed {
			timed[i] = true
		}
		n = len(in.Stages)
	}
	return n, timed
}

// programs returns the plain programs that time case in for v (the
// baseline when nil), compiled once per variant and case.
func (w *sweep) programs(ctx context.Context, v *check.Variant, in *spec.Instance) ([]backend.Program, error) {
	n, _ := w.stagesToRun(in)
	return w.session.StagePrograms(ctx, v, in, n)
}

// samplerStates numbers the samplers' starting states (their StateKey).
var samplerStates atomic.Uint64

// sampler times one sample of case in with progs: the stages up to the
// last timed one run, the timed ones with the phase's dispatches and the
// others once, and the sample is the sum of the timed stages' totals. The
// stages before the first timed one run once, on the first sample, and
// their outputs are every sample's starting state; nothing is read back
// that no later stage of the sample reads, and the buffers that start a
// sample are known by key, so a GPU backend keeps them on the device: a
// sample is dispatches, not transfers. With last set, the last sample of
// the measurement (measure takes the phase's warm-ups and pairs, no more)
// reads every device buffer back after its dispatches, outside the
// sample's time, into *last: the bytes the check after timing compares.
func (w *sweep) sampler(progs []backend.Program, in *spec.Instance, ph Phase, last *map[string][]byte) measure.Sampler {
	n, timed := w.stagesToRun(in)
	first := slices.Index(timed, true)
	repeat := dispatches(ph, in)
	var start map[string][]byte
	key := fmt.Sprintf("sampler%d", samplerStates.Add(1))
	calls, total := 0, max(ph.Warmup, 0)+ph.Pairs
	return func(ctx context.Context) (measure.Sample, error) {
		if start == nil && first > 0 {
			ex, err := check.ExecuteCase(ctx, progs, in, check.ExecOptions{Stages: first})
			if err != nil {
				return measure.Sample{}, err
			}
			start = ex.Outputs
		}
		calls++
		keep := last != nil && calls == total
		var ex *check.Execution
		t0 := time.Now()
		defer w.addTime(&w.res.RunSeconds, t0)
		err := w.pipe.sample(func() error {
			var err error
			ex, err = check.ExecuteCase(ctx, progs, in, check.ExecOptions{Repeat: repeat, Stages: n, From: max(first, 0),
				State: start, StateKey: key, Timed: timed, Discard: !keep})
			return err
		})
		if err != nil {
			return measure.Sample{}, err
		}
		var d time.Duration
		for _, st := range ex.Stages {
			if timed[st.Stage] {
				d += st.Total
			}
		}
		if keep {
			*last = ex.Outputs
		}
		w.addDevice(d)
		return measure.Sample{Dur: d, Clock: w.info.Clock}, nil
	}
}

// dispatches is the number of dispatches a sample of in submits.
func dispatches(ph Phase, in *spec.Instance) int {
	if ph.Dispatches > 0 {
		return ph.Dispatches
	}
	return max(in.Dispatches, 1)
}

// options returns measure's options for a phase at case in.
func (w *sweep) options(ph Phase, in *spec.Instance, variant string) measure.Options {
	warmup := ph.Warmup
	if warmup <= 0 {
		warmup = -1 // none; 0 would be measure's default
	}
	return measure.Options{
		Warmup: warmup, Pairs: ph.Pairs, MaxReruns: -1,
		Confidence: w.plan.Rule.Confidence, Seed: w.plan.Search.Seed,
		Label: w.info.Timing, Dispatches: dispatches(ph, in), A: "baseline", B: variant, Screen: w.plan.screen(),
	}
}

// A timed is a measurement as the sweep uses it: the statistics of its
// last attempt, recomputed from the stored samples, and how many attempts
// it took.
type timed struct {
	*measure.Result
	attempts     int
	contaminated []string // flags of every contaminated attempt, one entry each
}

// measureKey returns the measurement of k, measuring it when the store
// has no usable one: a complete, clean measurement (or as many
// contaminated attempts as the phase allows) is never taken again; an
// interrupted one is taken again from its first pair. v is the variant
// timed (nil for a control). A variant whose outputs after a measurement
// differed from the baseline's (now or in a stored attempt) is a
// *timingError that failed after timing: it is not timed again.
func (w *sweep) measureKey(ctx context.Context, k store.Key, v *check.Variant, in *spec.Instance, ph Phase) (*timed, error) {
	ms, err := w.st.Measurements(ctx, k)
	if err != nil {
		return nil, err
	}
	if v != nil {
		if err := w.failedAfter(ctx, k); err != nil {
			return nil, err
		}
	}
	done := func() bool {
		return len(ms) > 0 && (!ms[len(ms)-1].Summary.Contaminated || len(ms) >= 1+ph.MaxReruns)
	}
	if !done() {
		if err := w.budgetCheck(); err != nil {
			return nil, err
		}
		name := "baseline"
		if v != nil {
			name = v.Name
		}
		base, err := w.programs(ctx, nil, in)
		if err != nil {
			return nil, fmt.Errorf("baseline programs for %s: %w", caseName(in), err)
		}
		progs := base
		if v != nil {
			if progs, err = w.programs(ctx, v, in); err != nil {
				return nil, &timingError{err: fmt.Errorf("%s at %s: %w", name, caseName(in), err)}
			}
		}
		vin := in
		if v != nil {
			if vin, err = w.session.Instance(v, in); err != nil {
				return nil, &timingError{err: fmt.Errorf("%s at %s: %w", name, caseName(in), err)}
			}
		}
		for !done() {
			var r *measure.Result
			err := w.pipe.measurement(func() error {
				var before []backend.RequestStat
				if w.rc != nil {
					before = w.rc.RunnerRequests()
					defer func() {
						w.mu.Lock()
						w.res.SampleRequests = backend.AddRequests(w.res.SampleRequests, backend.RequestsSince(w.rc.RunnerRequests(), before))
						w.mu.Unlock()
					}()
				}
				var err error
				r, err = w.measureOnce(ctx, k, in, vin, base, progs, w.options(ph, in, name), ph, v != nil)
				return err
			})
			if err != nil {
				return nil, err
			}
			w.logf(name, "%s at %s, attempt %d: %s", k.Phase, k.Case, len(ms)+1, resultLine(r))
			if ms, err = w.st.Measurements(ctx, k); err != nil {
				return nil, err
			}
			if v != nil {
				if err := w.failedAfter(ctx, k); err != nil {
					return nil, err
				}
			}
		}
	}
	return analyzeStored(ctx, w.st, w.plan, ms, w.info.Timing)
}

// failedAfter returns a *timingError when a check after a measurement of
// k found outputs that differ from the baseline's.
func (w *sweep) failedAfter(ctx context.Context, k store.Key) error {
	cs, err := w.st.AfterTiming(ctx, k)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Status != string(check.Pass) {
			return &timingError{err: fmt.Errorf("%s at %s: %s", c.Status, k.Case, c.Message), after: true}
		}
	}
	return nil
}

// afterTiming compares the outputs of a variant's last timed sample with
// the baseline's last timed sample of the same measurement: the same
// dispatches from the same starting bytes, which for a kernel that a
// dispatch again does not change are the confirmed bytes.
func afterTiming(in *spec.Instance, base, got map[string][]byte, parity check.Parity) store.Confirmation {
	if base == nil || got == nil {
		return store.Confirmation{Status: string(check.FailAfterTiming), Message: "the last timed sample's outputs were not read back"}
	}
	m, tol := check.CompareParity(in, base, got, parity)
	if m != nil {
		return store.Confirmation{Status: string(check.FailAfterTiming),
			Message: "the outputs of the last timed sample differ from the baseline's after the same dispatches: " + m.String()}
	}
	if tol != nil && !tol.Bitwise {
		return store.Confirmation{Status: string(check.Pass), Message: tol.Text()}
	}
	return store.Confirmation{Status: string(check.Pass)}
}

// A timingError is a variant that was verified and confirmed but did not
// run when timed, or whose outputs after timing differ: its result, not
// the sweep's failure.
type timingError struct {
	err   error
	after bool // the outputs read back after a measurement differ: the variant failed after timing
}

func (e *timingError) Error() string { return e.err.Error() }
func (e *timingError) Unwrap() error { return e.err }

// measureOnce takes one attempt of k's measurement of progs against
// base, writing each pair as it completes and the summary at the end;
// for a variant (variant set), with the check of its last timed sample's
// outputs.
func (w *sweep) measureOnce(ctx context.Context, k store.Key, in, vin *spec.Instance, base, progs []backend.Program, opts measure.Options, ph Phase, variant bool) (*measure.Result, error) {
	id, err := w.st.Begin(ctx, k)
	if err != nil {
		return nil, err
	}
	var lastA, lastB map[string][]byte
	var pa, pb *map[string][]byte
	if variant {
		pa, pb = &lastA, &lastB
	}
	a, b := w.sampler(base, in, ph, pa), w.sampler(progs, vin, ph, pb)
	if variant {
		// A variant that fails when run for timing (verified and
		// confirmed, but not at this many dispatches, or from this
		// state) is its result, not the sweep's failure.
		inner := b
		b = func(ctx context.Context) (measure.Sample, error) {
			s, err := inner(ctx)
			if err != nil && ctx.Err() == nil {
				return s, &timingError{err: fmt.Errorf("%s when timed at %s: %w", opts.B, k.Case, err)}
			}
			return s, err
		}
	}
	rec := &pairWriter{w: w, id: id, warmup: max(ph.Warmup, 0)}
	start, device := time.Now(), w.deviceSeconds()
	r, err := measure.Paired(ctx, rec.wrap(store.SideA, a), rec.wrap(store.SideB, b), opts)
	w.mu.Lock()
	w.res.TimingSeconds += time.Since(start).Seconds()
	w.res.SampleSeconds += w.device - device
	w.mu.Unlock()
	if err == nil {
		err = rec.err
	}
	if err != nil {
		return nil, err
	}
	if variant {
		if err := w.st.PutSummaryAfter(ctx, id, summaryOf(r), afterTiming(in, lastA, lastB, w.plan.ParityOf())); err != nil {
			return nil, err
		}
	} else if err := w.st.PutSummary(ctx, id, summaryOf(r)); err != nil {
		return nil, err
	}
	w.taken("measurement", k)
	return r, nil
}

// A pairWriter writes each pair of a measurement to the store as soon as
// its second sample is taken. Paired takes samples in a fixed sequence
// (warm-ups A B, then pairs alternating which side runs first), so the
// position of a call in it says which pair it belongs to.
type pairWriter struct {
	w      *sweep
	id     string
	warmup int
	mu     sync.Mutex
	calls  int
	first  store.Sample
	err    error
}

func (p *pairWriter) wrap(side store.Side, s measure.Sampler) measure.Sampler {
	return func(ctx context.Context) (measure.Sample, error) {
		x, err := s(ctx)
		if err != nil {
			return x, err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		c := p.calls
		p.calls++
		if c < 2*p.warmup {
			return x, nil
		}
		j := c - 2*p.warmup
		smp := store.Sample{Pair: j / 2, Side: side, Order: j % 2, NS: int64(x.Dur), Clock: x.Clock}
		if smp.Order == 0 {
			p.first = smp
			return x, nil
		}
		t0 := time.Now()
		err = p.w.st.PutSamples(ctx, p.id, p.first, smp)
		p.w.addTime(&p.w.res.StoreSeconds, t0)
		if err != nil && p.err == nil {
			p.err = err
			return x, err
		}
		return x, nil
	}
}

// summaryOf is a result's summary as the store keeps it; the result,
// every sample and note included, is its detail.
func summaryOf(r *measure.Result) store.Summary {
	s := r.Stats
	var flags []string
	for _, f := range r.Flags {
		flags = append(flags, f.String())
	}
	detail, _ := json.Marshal(r)
	return store.Summary{
		Pairs: s.N, MedianA: float64(s.MedianA), MedianB: float64(s.MedianB), Ratio: s.Ratio,
		CILow: s.Lo, CIHigh: s.Hi, CILevel: s.Confidence, RatioMin: s.MinRatio, RatioMax: s.MaxRatio,
		Contaminated: r.Contaminated, Flags: flags, Note: strings.Join(r.Notes, "; "), Detail: detail,
	}
}

// analyzeStored recomputes the last of the measurements ms from its
// stored pairs, as measure.Analyze does, so that a result reads the same
// whether it was just taken or read back by a resumed sweep: the
// statistics depend on the samples, the rule's confidence and the plan's
// seed only.
func analyzeStored(ctx context.Context, st *store.Store, p *Plan, ms []store.Measurement, label string) (*timed, error) {
	last := ms[len(ms)-1]
	samples, err := st.Samples(ctx, last.ID)
	if err != nil {
		return nil, err
	}
	pairs, clock, err := pairsOf(samples)
	if err != nil {
		return nil, fmt.Errorf("measurement %s: %w", last.ID, err)
	}
	name := "variant"
	if last.Key.Variant == st.Baseline() {
		name = "baseline"
	}
	r, err := measure.Analyze(pairs, clock, measure.Options{
		Confidence: p.Rule.Confidence, Seed: p.Search.Seed, Label: label, A: "baseline", B: name, Screen: p.screen(),
	})
	if err != nil {
		return nil, fmt.Errorf("measurement %s: %w", last.ID, err)
	}
	t := &timed{Result: r, attempts: len(ms)}
	for _, m := range ms {
		if m.Summary != nil && m.Summary.Contaminated {
			t.contaminated = append(t.contaminated, strings.Join(m.Summary.Flags, "; "))
		}
	}
	return t, nil
}

// pairsOf turns stored samples into measure's pairs.
func pairsOf(samples []store.Sample) ([]measure.Pair, string, error) {
	byPair := map[int]*measure.Pair{}
	var idx []int
	clock := ""
	for _, s := range samples {
		p, ok := byPair[s.Pair]
		if !ok {
			p = &measure.Pair{}
			byPair[s.Pair] = p
			idx = append(idx, s.Pair)
		}
		if clock == "" {
			clock = s.Clock
		}
		switch s.Side {
		case store.SideA:
			p.A = time.Duration(s.NS)
			p.AFirst = s.Order == 0
		case store.SideB:
			p.B = time.Duration(s.NS)
		}
	}
	sort.Ints(idx)
	var out []measure.Pair
	for i, k := range idx {
		if k != i {
			return nil, "", fmt.Errorf("pair %d is missing", i)
		}
		p := byPair[k]
		if p.A == 0 || p.B == 0 {
			return nil, "", fmt.Errorf("pair %d is half a pair", k)
		}
		out = append(out, *p)
	}
	return out, clock, nil
}

// resultLine is a measurement in one line, for logs.
func resultLine(r *measure.Result) string {
	var b strings.Builder
	r.WriteText(&b)
	line, _, _ := strings.Cut(b.String(), "\n")
	if r.Contaminated {
		line += " (contaminated)"
	}
	return line
}

func caseName(in *spec.Instance) string { return in.Case.Set + "/" + in.Case.Name }
