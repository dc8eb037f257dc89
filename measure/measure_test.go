package measure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A fake is a Sampler whose n-th call returns durs(n), recording every
// call in a shared log.
type fake struct {
	name  string
	log   *[]string
	calls int
	durs  func(n int) time.Duration
	clock string
	err   func(n int) error // or nil
	hook  func(n int)       // called before returning, or nil
}

func (f *fake) sample(ctx context.Context) (Sample, error) {
	n := f.calls
	f.calls++
	*f.log = append(*f.log, f.name)
	if f.hook != nil {
		f.hook(n)
	}
	if f.err != nil {
		if err := f.err(n); err != nil {
			return Sample{}, err
		}
	}
	clock := f.clock
	if clock == "" {
		clock = ClockGPU
	}
	return Sample{Dur: f.durs(n), Clock: clock}, nil
}

// fakes returns two fakes sharing a log: A's n-th sample is 66 ms + n µs,
// B's 63 ms + n µs, so every sample can be traced to its call.
func fakes() (a, b *fake, log *[]string) {
	log = new([]string)
	a = &fake{name: "A", log: log, durs: func(n int) time.Duration { return 66*time.Millisecond + time.Duration(n)*time.Microsecond }}
	b = &fake{name: "B", log: log, durs: func(n int) time.Duration { return 63*time.Millisecond + time.Duration(n)*time.Microsecond }}
	return a, b, log
}

func TestPairedOrder(t *testing.T) {
	tests := []struct {
		name          string
		warmup, pairs int
		want          string
	}{
		{"default warm-up", 0, 5, "AB|AB BA AB BA AB"},
		{"two warm-ups", 2, 4, "AB AB|AB BA AB BA"},
		{"no warm-up", -1, 3, "|AB BA AB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, log := fakes()
			r, err := Paired(context.Background(), a.sample, b.sample, Options{Warmup: tt.warmup, Pairs: tt.pairs})
			if err != nil {
				t.Fatal(err)
			}
			warm := max(tt.warmup, 0)
			if tt.warmup == 0 {
				warm = DefaultWarmup
			}
			want := strings.NewReplacer(" ", "", "|", "").Replace(tt.want)
			if got := strings.Join(*log, ""); got != want {
				t.Errorf("call order %s, want %s", got, want)
			}
			runs := r.Attempts[0].Runs
			if len(runs) != 2*warm+2*tt.pairs {
				t.Fatalf("%d runs kept, want %d", len(runs), 2*warm+2*tt.pairs)
			}
			for i, run := range runs {
				if string(run.Side) != (*log)[i] || run.Warmup != (i < 2*warm) {
					t.Errorf("run %d = %+v, want side %s, warm-up %v", i, run, (*log)[i], i < 2*warm)
				}
			}
			// Pair i holds A's and B's (warm+i)-th samples whatever the order.
			if len(r.Pairs()) != tt.pairs || !r.Complete {
				t.Fatalf("%d pairs, complete %v; want %d, true", len(r.Pairs()), r.Complete, tt.pairs)
			}
			for i, p := range r.Pairs() {
				if p.A != a.durs(warm+i) || p.B != b.durs(warm+i) || p.AFirst != (i%2 == 0) {
					t.Errorf("pair %d = %+v, want A %v, B %v, AFirst %v", i, p, a.durs(warm+i), b.durs(warm+i), i%2 == 0)
				}
			}
			if r.Stats.N != tt.pairs || r.Clock != ClockGPU || r.Contaminated || r.A != "baseline" || r.B != "variant" {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func TestPairedCancel(t *testing.T) {
	a, b, log := fakes()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel during the 8th call: pair 2's first half (B) completes, the
	// second is never taken.
	b.hook = func(n int) {
		if len(*log) == 8 {
			cancel()
		}
	}
	r, err := Paired(ctx, a.sample, b.sample, Options{Pairs: 9})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if r == nil {
		t.Fatal("no result with the pairs so far")
	}
	if got := strings.Join(*log, ""); got != "ABABBAAB" {
		t.Errorf("calls %s, want ABABBAAB and no more", got)
	}
	if r.Complete || r.Stats.N != 3 || len(r.Pairs()) != 3 {
		t.Errorf("complete %v, %d pairs; want cut short with 3", r.Complete, r.Stats.N)
	}
	if len(r.Attempts) != 1 || len(r.Attempts[0].Runs) != 8 {
		t.Errorf("attempts %d, runs %d; want 1 attempt keeping all 8 samples", len(r.Attempts), len(r.Attempts[0].Runs))
	}
	if err := r.Usable(); err == nil || !strings.Contains(err.Error(), "3 of 9 pairs") {
		t.Errorf("Usable = %v, want cut short after 3 of 9 pairs", err)
	}
	if !strings.Contains(err.Error(), "after 3 of 9 pairs") {
		t.Errorf("error %q does not say how far it got", err)
	}
}

func TestPairedSamplerCancelled(t *testing.T) {
	// A sampler that notices the context itself: its error may not wrap
	// the context's, but errors.Is must still see it.
	a, b, _ := fakes()
	ctx, cancel := context.WithCancel(context.Background())
	b.err = func(n int) error {
		if n == 3 {
			cancel()
			return errors.New("runner killed")
		}
		return nil
	}
	r, err := Paired(ctx, a.sample, b.sample, Options{})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "runner killed") {
		t.Errorf("err = %v, want context.Canceled and the sampler's error", err)
	}
	if r == nil || r.Complete {
		t.Errorf("result %v, want a partial one", r)
	}
}

func TestPairedErrors(t *testing.T) {
	boom := errors.New("kernel crashed")
	tests := []struct {
		name    string
		setup   func(a, b *fake)
		opts    Options
		wantErr string
		wantIs  error
	}{
		{"sampler error", func(a, b *fake) {
			b.err = func(n int) error {
				if n == 4 {
					return boom
				}
				return nil
			}
		}, Options{}, "measure variant (B), pair 3: kernel crashed", boom},
		{"zero duration", func(a, b *fake) { a.durs = func(int) time.Duration { return 0 } }, Options{}, "non-positive duration", nil},
		{"unknown clock", func(a, b *fake) { a.clock = "wall" }, Options{}, `clock "wall" is neither`, nil},
		{"mixed clocks", func(a, b *fake) { b.clock = ClockHost }, Options{}, `clock "host" after samples timed by "gpu"`, nil},
		{"bad confidence", nil, Options{Confidence: 1.5}, "confidence 1.5 is not in (0, 1)", nil},
		{"negative pairs", nil, Options{Pairs: -1}, "pairs -1 is negative", nil},
		{"bad screen", nil, Options{Screen: Screen{K: -2}}, "screen: k -2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, _ := fakes()
			if tt.setup != nil {
				tt.setup(a, b)
			}
			_, err := Paired(context.Background(), a.sample, b.sample, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v does not wrap %v", err, tt.wantIs)
			}
		})
	}
	if _, err := Paired(context.Background(), nil, nil, Options{}); err == nil {
		t.Error("nil samplers: no error")
	}
}

// series returns durations that follow ms for the pairs of each attempt
// (one warm-up per side first), attempt by attempt.
func seriesFake(name string, log *[]string, attempts ...[]float64) *fake {
	return &fake{name: name, log: log, durs: func(n int) time.Duration {
		per := len(attempts[0]) + 1
		at, i := n/per, n%per
		at = min(at, len(attempts)-1)
		if i == 0 {
			return msd(attempts[at][0]) // warm-up
		}
		return msd(attempts[at][i-1])
	}}
}

func TestPairedReruns(t *testing.T) {
	log := new([]string)
	a := seriesFake("A", log, seedShiftA, tightA)
	b := seriesFake("B", log, seedShiftB, scaled(tightB, 0.96))
	r, err := Paired(context.Background(), a.sample, b.sample, Options{Pairs: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Attempts) != 2 || r.Contaminated || !r.Complete {
		t.Fatalf("%d attempts, contaminated %v; want 2, a clean second", len(r.Attempts), r.Contaminated)
	}
	if len(*log) != 2*(2+18) {
		t.Errorf("%d samples taken, want 40 (two attempts of one warm-up and 9 pairs per side)", len(*log))
	}
	if f := r.Attempts[0].Flags; len(f) != 1 || f[0].Kind != FlagShift || f[0].From != 7 {
		t.Errorf("first attempt's flags %v, want the shift at pairs 7–8", f)
	}
	if !hasNote(r, "attempt 1 of 3: contaminated: shift: pairs 7–8") || !hasNote(r, "measuring again") || !hasNote(r, "attempt 2 of 3: clean") {
		t.Errorf("notes %q", r.Notes)
	}
	want := pairsOf(t, tightA, scaled(tightB, 0.96))
	if !reflect.DeepEqual(r.Pairs(), want) {
		t.Errorf("reported pairs are not the second attempt's")
	}
	if r.Stats.Gain() < 0.03 {
		t.Errorf("gain %v, want the second attempt's ~4%%", r.Stats.Gain())
	}
}

func TestPairedAllContaminated(t *testing.T) {
	log := new([]string)
	a := seriesFake("A", log, seedShiftA)
	b := seriesFake("B", log, seedShiftB)
	r, err := Paired(context.Background(), a.sample, b.sample, Options{Pairs: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Attempts) != 3 || !r.Contaminated || len(r.Flags) == 0 {
		t.Fatalf("%d attempts, contaminated %v; want 3, contaminated", len(r.Attempts), r.Contaminated)
	}
	if !hasNote(r, "attempt 3 of 3: contaminated") || !hasNote(r, "must not decide anything") {
		t.Errorf("notes %q", r.Notes)
	}
	if err := r.Usable(); err == nil || !strings.Contains(err.Error(), "contaminated in all 3 attempts") {
		t.Errorf("Usable = %v", err)
	}

	*log = nil
	r, err = Paired(context.Background(), a.sample, b.sample, Options{Pairs: 9, MaxReruns: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Attempts) != 1 || !r.Contaminated || !hasNote(r, "attempt 1 of 1") {
		t.Errorf("MaxReruns -1: %d attempts, notes %q; want one", len(r.Attempts), r.Notes)
	}
}

func TestPairedRerunWaitCancel(t *testing.T) {
	log := new([]string)
	a := seriesFake("A", log, seedShiftA)
	b := seriesFake("B", log, seedShiftB)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r, err := Paired(ctx, a.sample, b.sample, Options{Pairs: 9, RerunWait: time.Hour})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "before attempt 2") {
		t.Fatalf("err = %v, want stopped before attempt 2", err)
	}
	if len(r.Attempts) != 1 || !r.Contaminated {
		t.Errorf("%d attempts, contaminated %v", len(r.Attempts), r.Contaminated)
	}
}

func TestControl(t *testing.T) {
	log := new([]string)
	var calls int
	s := func(ctx context.Context) (Sample, error) {
		calls++
		*log = append(*log, "S")
		return Sample{Dur: msd(tightA[calls%len(tightA)]), Clock: ClockHost}, nil
	}
	r, err := Control(context.Background(), s, Options{A: "base", Label: "cpu emulator time"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Control || r.A != "base" || r.B != "base" || r.Label != "cpu emulator time" || r.Clock != ClockHost {
		t.Errorf("control result %+v", r)
	}
	if calls != 2*(DefaultWarmup+DefaultPairs) {
		t.Errorf("%d calls, want %d", calls, 2*(DefaultWarmup+DefaultPairs))
	}
	if !(r.Stats.Lo <= 1 && 1 <= r.Stats.Hi) || r.Spread() <= 0 || r.Spread() > 0.01 {
		t.Errorf("control interval [%v, %v], spread %v; want 1 inside, under 1%%", r.Stats.Lo, r.Stats.Hi, r.Spread())
	}
}

func TestAnalyzeMatchesPaired(t *testing.T) {
	a, b, _ := fakes()
	opts := Options{Pairs: 11, Seed: 9, Confidence: 0.9, Resamples: 5000, Label: "x"}
	r, err := Paired(context.Background(), a.sample, b.sample, opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Analyze(r.Pairs(), r.Clock, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Stats, again.Stats) {
		t.Errorf("Analyze of the same pairs:\n%+v\nPaired:\n%+v", again.Stats, r.Stats)
	}
	if _, err := Analyze([]Pair{{A: 1, B: 0}}, ClockGPU, Options{}); err == nil {
		t.Error("Analyze of a zero duration: no error")
	}
	if _, err := Analyze(r.Pairs(), "", Options{}); err == nil {
		t.Error("Analyze without a clock: no error")
	}
}

func TestResultJSON(t *testing.T) {
	log := new([]string)
	a := seriesFake("A", log, seedShiftA, tightA)
	b := seriesFake("B", log, seedShiftB, tightB)
	r, err := Paired(context.Background(), a.sample, b.sample, Options{Label: "gpu time", Dispatches: 3})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*r, back) {
		t.Errorf("JSON round trip differs:\n%s", data)
	}
	for _, key := range []string{`"median_a_ns":`, `"a_first":true`, `"warmup":true`, `"kind":"shift"`, `"dispatches":3`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func ExamplePaired() {
	// Stand-ins for a backend: the baseline takes 66 ms, the candidate
	// 4 % less, with a little noise.
	var n int
	jitter := func() time.Duration { n++; return time.Duration(n%5) * 50 * time.Microsecond }
	base := func(ctx context.Context) (Sample, error) {
		return Sample{Dur: 66*time.Millisecond + jitter(), Clock: ClockGPU}, nil
	}
	cand := func(ctx context.Context) (Sample, error) {
		return Sample{Dur: 63360*time.Microsecond + jitter(), Clock: ClockGPU}, nil
	}
	r, err := Paired(context.Background(), base, cand, Options{Dispatches: 3, Label: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d pairs, %d faster, change %+.0f%%\n", r.Stats.N, r.Stats.Wins, r.Stats.Change)
	// Output: 9 pairs, 9 faster, change -4%
}
