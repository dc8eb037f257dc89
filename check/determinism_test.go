package check

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/fake"
)

// A flaky backend is the fake backend whose plain programs of a source
// that says "flaky" give other bytes on every second run.
type flaky struct{ *fake.Backend }

func (b *flaky) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	p, err := b.Backend.Compile(ctx, src)
	if err != nil || src.Check || !bytes.Contains(src.Text, []byte("flaky")) {
		return p, err
	}
	return &flakyProgram{Program: p}, nil
}

type flakyProgram struct {
	backend.Program
	runs int
}

func (p *flakyProgram) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	r, err := p.Program.Run(ctx, d)
	p.runs++
	if err == nil && p.runs%2 == 0 {
		for i, out := range r.Outputs {
			r.Outputs[i] = bytes.Repeat([]byte{0x77}, len(out))
		}
	}
	return r, err
}

// TestVariantDeterminism: a variant whose bytes change between two
// identical runs of one case fails fail-nondeterministic, with both
// results in its mismatch; a steady one passes.
func TestVariantDeterminism(t *testing.T) {
	s := setup(t, testSpec, copyKernel)
	rep := run(t, Options{Spec: s, Backend: &flaky{fake.New()}, Variants: []Variant{
		variant("flaky", copyKernel+"// flaky\n"),
		variant("steady", copyKernel+"// steady\n"),
	}})
	if rep.Control.Status != Pass {
		t.Fatalf("control %s %s", rep.Control.Status, rep.Control.Msg)
	}
	fl, st := rep.Variants[0], rep.Variants[1]
	if fl.Status != FailNondet || fl.Mismatch == nil || fl.Mismatch.Want == "" || fl.Mismatch.Got == "" {
		t.Errorf("flaky: %s %q mismatch %+v; want %s with both runs' values", fl.Status, fl.Msg, fl.Mismatch, FailNondet)
	}
	if !strings.Contains(fl.Msg, "two identical runs") {
		t.Errorf("flaky: message %q", fl.Msg)
	}
	if st.Status != Pass {
		t.Errorf("steady: %s %s", st.Status, st.Msg)
	}
}

// TestFreshSeeds: --fresh-seeds gives the listed cases input seeds of the
// run: the same with the same Seed, others with a nonce.
func TestFreshSeeds(t *testing.T) {
	s := setup(t, testSpec, copyKernel)
	seeds := func(o Options) []uint64 {
		ss, err := NewSession(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		var out []uint64
		for _, in := range ss.Instances() {
			out = append(out, in.Case.Seed)
		}
		return out
	}
	plain := seeds(Options{Spec: s, Backend: fake.New()})
	a := seeds(Options{Spec: s, Backend: fake.New(), FreshSeeds: true, Seed: 9, SeedSet: true})
	b := seeds(Options{Spec: s, Backend: fake.New(), FreshSeeds: true, Seed: 9, SeedSet: true})
	n := seeds(Options{Spec: s, Backend: fake.New(), FreshSeeds: true})
	if plain[0] != 0 {
		t.Errorf("without fresh seeds a listed case has seed %x", plain[0])
	}
	if a[0] == 0 || a[0] != b[0] || a[0] == n[0] {
		t.Errorf("fresh seeds: %x, %x with seed 9, %x with a nonce", a[0], b[0], n[0])
	}
}

// TestHeldOutSkipped: a drawn case the spec cannot instantiate (an odd N
// that the output's shape [2, N/2] refuses) is skipped and counted, never
// a failure of the variant or a crash; the others judge it.
func TestHeldOutSkipped(t *testing.T) {
	s := setup(t, strings.Replace(testSpec, "sets:", "domains:\n  N: {min: 2, max: 64}\nsets:", 1), copyKernel)
	rep := run(t, Options{Spec: s, Variants: []Variant{variant("same", copyKernel+"// same\n")}, HeldOut: 12, Seed: 4, SeedSet: true})
	r := rep.Variants[0]
	if r.Status != Pass || r.HeldOut == nil {
		t.Fatalf("%s %s, held out %+v", r.Status, r.Msg, r.HeldOut)
	}
	h := r.HeldOut
	if h.Skipped == 0 || h.Judged == 0 || h.Judged+h.Skipped != len(h.Cases) {
		t.Errorf("judged %d, skipped %d of %d drawn: want some of each", h.Judged, h.Skipped, len(h.Cases))
	}
	for _, d := range h.Cases {
		if d.Skipped != "" && !strings.Contains(d.Skipped, "not an integer") {
			t.Errorf("case %s skipped: %s", d.Case, d.Skipped)
		}
	}
	if rep.HeldOut != 12 || rep.HeldOutSeed != "4" {
		t.Errorf("report: held out %d, seed %q", rep.HeldOut, rep.HeldOutSeed)
	}
}
