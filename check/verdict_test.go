package check

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/fake"
	"metalab/internal/edit"
)

// A twoFaced backend is the fake backend whose programs of a source that
// says "two-faced: plain" give other bytes in the plain build than in the
// checking build (a kernel that tells the builds apart), and "two-faced:
// checking" the other way round.
type twoFaced struct {
	*fake.Backend
	name    string
	noCheck bool // Info says it has no checking mode, and a checking compile is Unavailable
	down    string
}

func (b *twoFaced) Name() string {
	if b.name != "" {
		return b.name
	}
	return "fake"
}

func (b *twoFaced) Available(ctx context.Context) (bool, string) {
	if b.down != "" {
		return false, b.down
	}
	return true, ""
}

func (b *twoFaced) Info(ctx context.Context) backend.Info {
	i := b.Backend.Info(ctx)
	i.Name = b.Name()
	if b.noCheck {
		i.Check = false
	}
	return i
}

func (b *twoFaced) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	if b.noCheck && src.Check {
		return nil, &backend.Failure{Kind: backend.Unavailable, Msg: "no checking mode"}
	}
	p, err := b.Backend.Compile(ctx, src)
	if err != nil {
		return nil, err
	}
	lie := bytes.Contains(src.Text, []byte("two-faced: plain")) && !src.Check ||
		bytes.Contains(src.Text, []byte("two-faced: checking")) && src.Check
	return &twoFacedProgram{Program: p, lie: lie}, nil
}

type twoFacedProgram struct {
	backend.Program
	lie bool
}

func (p *twoFacedProgram) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	r, err := p.Program.Run(ctx, d)
	if err == nil && p.lie {
		for i, out := range r.Outputs {
			r.Outputs[i] = bytes.Repeat([]byte{0}, len(out))
		}
	}
	return r, err
}

const copyKernel = "// fake: copy 0 1\n"

// TestBuildsDisagree: on one backend, a variant whose plain build (the one
// that is timed) writes other bytes than its checking build fails with its
// own status, whichever build is the honest one, and the message says
// which build gave the baseline's bytes.
func TestBuildsDisagree(t *testing.T) {
	s := setup(t, testSpec, copyKernel)
	rep := run(t, Options{Spec: s, Backend: &twoFaced{Backend: fake.New()}, Variants: []Variant{
		variant("plain-lies", copyKernel+"// two-faced: plain\n"),
		variant("checking-lies", copyKernel+"// two-faced: checking\n"),
		variant("honest", copyKernel+"// an honest comment\n"),
	}})
	if rep.Control.Status != Pass || !rep.Verified {
		t.Fatalf("control %s %s, verified %v", rep.Control.Status, rep.Control.Msg, rep.Verified)
	}
	pl, ch, ok := rep.Variants[0], rep.Variants[1], rep.Variants[2]
	if pl.Status != FailBuildsDisagree || pl.Stopped != PartConfirmation || pl.Verification.Status != Pass || !pl.Verified {
		t.Errorf("plain build lies: %s stopped at %q, verification %s; want %s at confirmation, verified", pl.Status, pl.Stopped, pl.Verification.Status, FailBuildsDisagree)
	}
	if !strings.Contains(pl.Msg, "the checking build gives the baseline's bytes, the plain build (the one that is timed) gives others") || pl.Mismatch == nil {
		t.Errorf("plain build lies: message %q, mismatch %v", pl.Msg, pl.Mismatch)
	}
	if ch.Status != FailBuildsDisagree || ch.Stopped != PartVerification || ch.Confirmation.Status != NotRun {
		t.Errorf("checking build lies: %s stopped at %q, confirmation %s; want %s at verification", ch.Status, ch.Stopped, ch.Confirmation.Status, FailBuildsDisagree)
	}
	if !strings.Contains(ch.Msg, "the plain build (the one that is timed) gives the baseline's bytes, the checking build gives others") {
		t.Errorf("checking build lies: message %q", ch.Msg)
	}
	if ok.Status != Pass || !ok.Verified || ok.Confirmation.Status != Pass || len(ok.Confirmation.Cases) != 2 || len(ok.Verification.Cases) != 2 {
		t.Errorf("honest: %s, verified %v, confirmation %s (%d cases), verification %d cases", ok.Status, ok.Verified, ok.Confirmation.Status,
			len(ok.Confirmation.Cases), len(ok.Verification.Cases))
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"stopped at confirmation (fake, plain build)", "stopped at verification (fake, checking build)", "VERIFICATION"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, &text)
		}
	}
}

// TestVerifyBackend: with a run backend that has no checking mode, a
// verification backend verifies (in the checking mode, on its cases) and
// the run's backend confirms; a variant failing on the run's backend alone
// stops at confirmation, one failing verification is not confirmed; with
// no verification backend every result is "not verified", never a silent
// pass; an unavailable verification backend stops the check before any
// work.
func TestVerifyBackend(t *testing.T) {
	s := setup(t, testSpec, copyKernel)
	gpu := &twoFaced{Backend: fake.New(), name: "gpu", noCheck: true}
	ver := &twoFaced{Backend: fake.New()}
	rep := run(t, Options{Spec: s, Backend: gpu, Verify: ver, Variants: []Variant{
		variant("ok", copyKernel+"\n"),
		variant("gpu-only", copyKernel+"// two-faced: plain\n"),
		variant("broken", "// fake: fill 1 7\n"),
	}})
	if !rep.Verified || rep.VerifyBackend != "fake" || rep.Backend != "gpu" || rep.Control.Status != Pass {
		t.Fatalf("report verified %v on %q, backend %q, control %s %s", rep.Verified, rep.VerifyBackend, rep.Backend, rep.Control.Status, rep.Control.Msg)
	}
	if ver.Compiles() == 0 {
		t.Errorf("nothing compiled on the verification backend")
	}
	ok, gpuOnly, broken := rep.Variants[0], rep.Variants[1], rep.Variants[2]
	if ok.Status != Pass || ok.Verification.Backend != "fake" || ok.Verification.Build != BuildChecking || ok.Confirmation.Backend != "gpu" {
		t.Errorf("ok: %s, verification %+v, confirmation %+v", ok.Status, ok.Verification, ok.Confirmation)
	}
	if gpuOnly.Status != FailParity || gpuOnly.Stopped != PartConfirmation || !gpuOnly.Verified || !strings.Contains(gpuOnly.Msg, "confirmation on gpu") {
		t.Errorf("gpu-only: %s stopped at %q, verified %v, msg %q", gpuOnly.Status, gpuOnly.Stopped, gpuOnly.Verified, gpuOnly.Msg)
	}
	if broken.Status != FailParity || broken.Stopped != PartVerification || broken.Confirmation.Status != NotRun || broken.Verified {
		t.Errorf("broken: %s stopped at %q, confirmation %s", broken.Status, broken.Stopped, broken.Confirmation.Status)
	}

	t.Run("not verified", func(t *testing.T) {
		for _, opts := range []Options{
			{Spec: s, Backend: &twoFaced{Backend: fake.New(), name: "gpu", noCheck: true}},
			{Spec: s, Backend: &twoFaced{Backend: fake.New()}, NoVerify: true},
		} {
			opts.Variants = []Variant{variant("v", copyKernel+"\n")}
			rep := run(t, opts)
			r := rep.Variants[0]
			if rep.Verified || r.Verified || r.Verification.Status != NotVerified || r.Status != Pass || r.Confirmation.Status != Pass {
				t.Errorf("%s: report verified %v, result %s verified %v, parts %s/%s", opts.Backend.Name(), rep.Verified, r.Status, r.Verified,
					r.Verification.Status, r.Confirmation.Status)
			}
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "not verified; confirmed on") || !regexp.MustCompile(`(?m)^v +pass .* not verified +pass$`).MatchString(text.String()) {
				t.Errorf("%s: the text report does not say not verified:\n%s", opts.Backend.Name(), &text)
			}
		}
	})
	t.Run("unavailable", func(t *testing.T) {
		runBE := &twoFaced{Backend: fake.New(), name: "gpu", noCheck: true}
		_, err := Run(context.Background(), Options{Spec: s, Backend: runBE, Verify: &twoFaced{Backend: fake.New(), down: "no C++ compiler"}})
		var env *backend.EnvError
		if !errors.As(err, &env) || !strings.Contains(err.Error(), "verification backend fake is not available: no C++ compiler") {
			t.Fatalf("err %v, want an EnvError naming the verification backend", err)
		}
		if runBE.Compiles() != 0 {
			t.Errorf("%d compiles before the verification backend was found missing", runBE.Compiles())
		}
	})
}

// TestMapLines maps a variant's lines to the baseline's through edits and
// by a line diff: kept lines map, changed and added ones do not.
func TestMapLines(t *testing.T) {
	base := []byte("a\nb\nc\nd\ne\n")
	tests := []struct {
		name  string
		text  string
		edits []edit.Edit
		want  []int // by variant line
	}{
		{"insert a line", "a\nb\nX\nc\nd\ne\n", []edit.Edit{{Start: 4, End: 4, New: "X\n"}}, []int{1, 2, 0, 3, 4, 5}},
		{"delete a line", "a\nc\nd\ne\n", []edit.Edit{{Start: 2, End: 4}}, []int{1, 3, 4, 5}},
		{"change in a line", "a\nbb\nc\nd\ne\n", []edit.Edit{{Start: 3, End: 3, New: "b"}}, []int{1, 0, 3, 4, 5}},
		{"split a line", "a\nb\nc\nd\nee\n", []edit.Edit{{Start: 8, End: 8, New: "e"}}, []int{1, 2, 3, 4, 0}},
		{"two edits", "Z\na\nc\nd\ne\nY\n", []edit.Edit{{Start: 0, End: 0, New: "Z\n"}, {Start: 2, End: 4}, {Start: 10, End: 10, New: "Y\n"}}, []int{0, 1, 3, 4, 5, 0}},
	}
	for _, tt := range tests {
		for _, mode := range []string{"edits", "diff", "wrong edits"} {
			var es []edit.Edit
			switch mode {
			case "edits":
				es = tt.edits
			case "wrong edits":
				es = []edit.Edit{{Start: 0, End: 10}} // not the variant: the diff decides
			}
			m := MapLines(base, []byte(tt.text), es)
			var got []int
			for l := 1; l <= len(tt.want); l++ {
				got = append(got, m.Base(l))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s by %s: lines map to %v, want %v", tt.name, mode, got, tt.want)
			}
		}
	}
}
