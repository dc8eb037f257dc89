package check

import (
	"context"
	"sync"
	"testing"

	"metalab/backend"
	"metalab/backend/fake"
)

// A countingBackend is the fake backend counting its plain programs' runs
// (the confirmation's; those of the checking build are the verification's)
// by source name and entry.
type countingBackend struct {
	*fake.Backend
	mu   sync.Mutex
	runs map[string]int
}

func (b *countingBackend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	p, err := b.Backend.Compile(ctx, src)
	if err != nil {
		return nil, err
	}
	key := src.Name + ":" + src.Entry
	if src.Check {
		key += ":check"
	}
	return &countingProgram{Program: p, b: b, key: key}, nil
}

func (b *countingBackend) count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[key]
}

type countingProgram struct {
	backend.Program
	b   *countingBackend
	key string
}

func (p *countingProgram) ObjectKey() string { return p.Program.(backend.ObjectProgram).ObjectKey() }

func (p *countingProgram) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	p.b.mu.Lock()
	p.b.runs[p.key]++
	p.b.mu.Unlock()
	return p.Program.Run(ctx, d)
}

// TestConfirmationRunsChangedStages: a variant's confirmation runs the
// stages whose programs are not the baseline's machine code, from the
// baseline's state before the first of them; after the last, the rest
// runs only where the state is not the baseline's. Changed bytes that a
// later stage reads still fail; changed bytes that a later stage
// overwrites still pass.
func TestConfirmationRunsChangedStages(t *testing.T) {
	const three = `source: k.metal
buffers:
  - {name: in, index: 0, type: half, count: 8, role: input, gen: {kind: iota, start: 1}}
  - {name: mid, type: half, count: 8, role: output}
  - {name: scratch, type: half, count: 8, role: output}
  - {name: tmp, type: half, count: 8, role: output}
  - {name: out, index: 1, type: half, count: 8, role: output}
stages:
  - {entry: a, threadgroups: [1], threads: [8], buffers: [in], bind: {mid: 1}}
  - {entry: b, threadgroups: [1], threads: [8], buffers: [], bind: {mid: 0, scratch: 1, tmp: 2}}
  - {entry: c, threadgroups: [1], threads: [8], buffers: [out], bind: {scratch: 0, tmp: 2}}
sets:
  s:
    cases: [{}]
`
	const (
		a = "// fake[a]: copy 0 1\n"
		b = "// fake[b]: copy 0 1\n"
		c = "// fake[c]: copy 0 1\n// fake[c]: fill 2 5\n"
	)
	s := setup(t, three, a+b+c)
	for _, tc := range []struct {
		name, text string
		want       Status
		runs       [3]int // the variant's runs of a, b and c
	}{
		{"comment", a + b + c + "// a comment\n", Pass, [3]int{0, 0, 0}},
		{"b-slower", a + b + "// fake[b]: time 1ms\n" + c, Pass, [3]int{0, 2, 0}},
		{"c-slower", a + b + c + "// fake[c]: time 1ms\n", Pass, [3]int{0, 0, 2}},
		// tmp differs after b, and c overwrites it: c runs, the bytes pass.
		{"b-tmp", a + b + "// fake[b]: poke 2 0 0x55\n" + c, Pass, [3]int{0, 2, 2}},
		// scratch differs after b and c copies it out: a failure.
		{"b-wrong", a + b + "// fake[b]: poke 1 0 0x55\n" + c, FailParity, [3]int{0, 1, 1}},
		{"a-and-c", a + "// fake[a]: time 1ms\n" + b + c + "// fake[c]: time 1ms\n", Pass, [3]int{2, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &countingBackend{Backend: fake.New(), runs: map[string]int{}}
			// Confirmation alone: the verification would catch b-wrong
			// first.
			rep := run(t, Options{Spec: s, Backend: be, NoVerify: true, Variants: []Variant{variant(tc.name, tc.text)}})
			if rep.Control.Status != Pass {
				t.Fatalf("control %s %s", rep.Control.Status, rep.Control.Msg)
			}
			r := rep.Variants[0]
			if r.Status != tc.want {
				t.Errorf("status %s %s, want %s", r.Status, r.Msg, tc.want)
			}
			if got := runsOf(be, tc.name, ""); got != tc.runs {
				t.Errorf("the variant's runs of stages a, b, c: %v, want %v", got, tc.runs)
			}

			// Verified in the checking mode on the same backend: the
			// checking build runs the same window, once (in order).
			be = &countingBackend{Backend: fake.New(), runs: map[string]int{}}
			rep = run(t, Options{Spec: s, Backend: be, Variants: []Variant{variant(tc.name, tc.text)}})
			if r := rep.Variants[0]; r.Status != tc.want {
				t.Errorf("verified: status %s %s, want %s", r.Status, r.Msg, tc.want)
			}
			want := tc.runs
			for i := range want {
				want[i] = min(want[i], 1)
			}
			if tc.name == "comment" {
				// No stage changed: the checking build runs them all, and
				// its findings are the baseline's own.
				want = [3]int{1, 1, 1}
			}
			if got := runsOf(be, tc.name, ":check"); got != want {
				t.Errorf("the checking build's runs of stages a, b, c: %v, want %v", got, want)
			}
		})
	}
}

// runsOf is the runs of the variant's programs of stages a, b and c (the
// checking build's with suffix ":check").
func runsOf(be *countingBackend, name, suffix string) [3]int {
	var got [3]int
	for i, e := range []string{"a", "b", "c"} {
		got[i] = be.count(name + ".metal:" + e + suffix)
	}
	return got
}
