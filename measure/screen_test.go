package measure

import (
	"strings"
	"testing"
)

func TestScreen(t *testing.T) {
	up := func(x []float64, from, to int, f float64) []float64 {
		y := append([]float64(nil), x...)
		for i := from; i <= to; i++ {
			y[i] *= f
		}
		return y
	}
	tests := []struct {
		name string
		a, b []float64
		want []Flag // Kind, From, To compared; Msg must name the pairs
	}{
		{
			name: "seed: contention jump in the last two pairs",
			a:    seedShiftA, b: seedShiftB,
			want: []Flag{{Kind: FlagShift, From: 7, To: 8}},
		},
		{
			name: "seed: noisy throughout, 99–133 ms",
			a:    seedNoisyA, b: seedNoisyB,
			want: []Flag{{Kind: FlagNoise, From: 0, To: 6}},
		},
		{
			name: "bump in the middle",
			a:    up(tightA, 3, 5, 1.25), b: up(scaled(tightB, 0.96), 3, 5, 1.22),
			want: []Flag{{Kind: FlagShift, From: 3, To: 5}},
		},
		{
			// More than half the series shifted: the median sits on the
			// new level, the first pairs are out of level below it.
			name: "shift covering most of the series",
			a:    up(tightA, 4, 8, 1.3), b: up(tightB, 4, 8, 1.3),
			want: []Flag{{Kind: FlagShift, From: 0, To: 3}},
		},
		{
			name: "drop after the first pairs (contention that ended)",
			a:    up(tightA, 0, 1, 1.2), b: up(tightB, 0, 1, 1.2),
			want: []Flag{{Kind: FlagShift, From: 0, To: 1}},
		},
		{name: "clean: tight ±0.5 % noise", a: tightA, b: tightB},
		{name: "clean: a real 4 % difference", a: tightA, b: scaled(tightB, 0.96)},
		{name: "clean: a 2× difference", a: tightA, b: scaled(tightB, 2)},
		{name: "clean: B 2× slower", a: scaled(tightA, 0.5), b: tightB},
		{
			// Seed 002: early warm-up/load outliers visible in the raw
			// pairs; one pair is not a shift.
			name: "clean: one outlier pair",
			a:    up(tightA, 0, 0, 1.12), b: up(tightB, 0, 0, 1.12),
		},
		{
			name: "clean: two outliers apart",
			a:    up(up(tightA, 2, 2, 1.2), 6, 6, 1.2), b: up(up(tightB, 2, 2, 1.2), 6, 6, 1.2),
		},
		{
			// Only one side out of level: the candidate's own behaviour,
			// not the machine's.
			name: "clean: one side jumps",
			a:    tightA, b: up(tightB, 7, 8, 1.3),
		},
		{
			name: "clean: the sides move apart",
			a:    up(tightA, 7, 8, 1.2), b: up(tightB, 7, 8, 0.8),
		},
		{
			name: "clean: one side noisy",
			a:    tightA, b: seedNoisyB[:7:7],
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := tt.a, tt.b
			if n := min(len(a), len(b)); len(a) != len(b) {
				a, b = a[:n], b[:n]
			}
			got := Screen{}.Check(pairsOf(t, a, b))
			if len(got) != len(tt.want) {
				t.Fatalf("Check = %v, want %d flag(s) %v", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Kind != w.Kind || g.From != w.From || g.To != w.To {
					t.Errorf("flag %d = %s %d–%d, want %s %d–%d", i, g.Kind, g.From, g.To, w.Kind, w.From, w.To)
				}
				if g.Msg == "" {
					t.Errorf("flag %d has no message", i)
				}
			}
		})
	}
}

func TestScreenMessages(t *testing.T) {
	got := Screen{}.Check(pairsOf(t, seedShiftA, seedShiftB))
	if len(got) != 1 {
		t.Fatalf("Check = %v, want one shift", got)
	}
	for _, want := range []string{"pairs 7–8", "84.700 ms–87.900 ms", "80.400 ms–82.600 ms", "66.310 ms", "63.840 ms"} {
		if !strings.Contains(got[0].Msg, want) {
			t.Errorf("message %q lacks %q", got[0].Msg, want)
		}
	}
	got = Screen{}.Check(pairsOf(t, seedNoisyA, seedNoisyB))
	if len(got) != 1 || !strings.Contains(got[0].Msg, "99.600 ms–131.200 ms") {
		t.Errorf("noise flag = %v, want the A range 99.600 ms–131.200 ms", got)
	}
}

func TestScreenKnobs(t *testing.T) {
	shift := pairsOf(t, seedShiftA, seedShiftB)
	if got := (Screen{Off: true}).Check(shift); got != nil {
		t.Errorf("Off: %v, want nothing", got)
	}
	if got := (Screen{Run: 3}).Check(shift); got != nil {
		t.Errorf("Run 3 with a two-pair jump: %v, want nothing", got)
	}
	if got := (Screen{Floor: 0.5}).Check(shift); got != nil {
		t.Errorf("Floor 50%% with a 30%% jump: %v, want nothing", got)
	}
	noisy := pairsOf(t, seedNoisyA, seedNoisyB)
	if got := (Screen{MaxNoise: 0.5}).Check(noisy); got != nil {
		t.Errorf("MaxNoise 50%%: %v, want nothing", got)
	}
	// A small, steady 3 % step in the last two pairs: under the default
	// 5 % floor, over a 2 % one (the noise is 0.2 %).
	a := []float64{66.19, 66.31, 66.08, 66.22, 66.15, 66.27, 66.11, 68.20, 68.31}
	b := []float64{63.78, 63.91, 63.70, 63.84, 63.65, 63.79, 63.88, 65.70, 65.81}
	if got := (Screen{}).Check(pairsOf(t, a, b)); got != nil {
		t.Errorf("default floor, 3%% step: %v, want nothing", got)
	}
	if got := (Screen{Floor: 0.02}).Check(pairsOf(t, a, b)); len(got) != 1 || got[0].From != 7 {
		t.Errorf("2%% floor, 3%% step: %v, want a shift at pairs 7–8", got)
	}
	for _, bad := range []Screen{{K: -1}, {Floor: -0.1}, {Run: -1}, {MaxNoise: -1}} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestObserveNotes(t *testing.T) {
	up := append([]float64(nil), tightA...)
	up[0] *= 1.12
	upB := append([]float64(nil), tightB...)
	upB[0] *= 1.12
	r, err := Analyze(pairsOf(t, up, upB), ClockGPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Contaminated || !hasNote(r, "outliers on both sides") || !hasNote(r, "pair 0 (A 74.133 ms") {
		t.Errorf("one outlier pair: contaminated %v, notes %q; want clean with a note naming pair 0", r.Contaminated, r.Notes)
	}
	r, err = Analyze(pairsOf(t, tightA[:7], seedNoisyB), ClockGPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Contaminated || !hasNote(r, "B is noisy") {
		t.Errorf("one noisy side: contaminated %v, notes %q; want clean with a note", r.Contaminated, r.Notes)
	}
	// Running second is 4 % slower, whichever side.
	a := make([]float64, 9)
	b := make([]float64, 9)
	for i := range a {
		a[i], b[i] = 66, 66*1.04
		if i%2 == 1 {
			a[i], b[i] = 66*1.04, 66
		}
	}
	r, err = Analyze(pairsOf(t, a, b), ClockGPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(r, "running second is 4.0% slower") {
		t.Errorf("position effect: notes %q, want it named", r.Notes)
	}
	// A real 4 % difference between the sides is not a position effect.
	r, err = Analyze(pairsOf(t, tightA, scaled(tightB, 0.96)), ClockGPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hasNote(r, "running second") || r.Stats.Order < 0.99 || r.Stats.Order > 1.01 {
		t.Errorf("4%% difference: order %v, notes %q; want no position effect", r.Stats.Order, r.Notes)
	}
}

func hasNote(r *Result, s string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}
