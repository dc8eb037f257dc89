package ref_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"metalab/backend"
	"metalab/backend/backendtest"
	"metalab/backend/cpu"
	"metalab/backend/cpu/cputest"
	"metalab/check"
	"metalab/kernels/ref"
	"metalab/spec"
)

// The tests in this file run the bundled kernels on the cpu backend, case
// by case, and compare every output element with the references.

// cpuBackend returns the shared cpu backend, or skips t when it cannot run
// here.
func cpuBackend(t *testing.T) *cpu.Backend { return cputest.Shared(t) }

// programs compiles the stages of in, reusing programs across cases.
type programs struct {
	b     backend.Backend
	texts map[string][]byte
	progs map[string]backend.Program
}

func (ps *programs) get(t *testing.T, st *spec.Stage) backend.Program {
	t.Helper()
	key := st.Source + "\x00" + st.Entry + "\x00" + st.ConfigKey()
	if p, ok := ps.progs[key]; ok {
		return p
	}
	text, ok := ps.texts[st.Source]
	if !ok {
		var err error
		if text, err = os.ReadFile(st.Source); err != nil {
			t.Fatal(err)
		}
		ps.texts[st.Source] = text
	}
	p, err := ps.b.Compile(context.Background(), backend.Source{
		Name: st.Source, Text: text, Dir: filepath.Dir(st.Source),
		Entry: st.Entry, Defines: st.Defines, Constants: st.Constants,
	})
	if err != nil {
		// cputest.Shared checked that the backend is available, so an
		// Unavailable failure here is a failure too.
		var f *backend.Failure
		if errors.As(err, &f) {
			t.Fatalf("compile %s %s: %v\n%s", st.Source, st.Entry, err, f.Log)
		}
		t.Fatalf("compile %s %s: %v", st.Source, st.Entry, err)
	}
	ps.progs[key] = p
	return p
}

func (ps *programs) close() {
	for _, p := range ps.progs {
		p.Close()
	}
}

// runTimeout bounds one kernel run; the full sets raise it.
var runTimeout = 2 * time.Minute

// runSets runs every case of the named sets of the spec at path and hands
// the instance and its final buffers to verify.
// The kernels run on the backend METALAB_TEST_BACKEND names (cpu by
// default; cuda on a GPU machine).
func runSets(t *testing.T, path string, sets []string, verify func(t *testing.T, in *spec.Instance, out map[string][]byte)) {
	b := backendtest.Selected(t)
	s, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := s.Cases(sets...)
	if err != nil {
		t.Fatal(err)
	}
	ps := &programs{b: b, texts: map[string][]byte{}, progs: map[string]backend.Program{}}
	defer ps.close()
	for _, c := range cases {
		t.Run(c.Set+"/"+c.Name, func(t *testing.T) {
			in, err := s.Instantiate(c)
			if err != nil {
				t.Fatal(err)
			}
			var progs []backend.Program
			for _, st := range in.Stages {
				progs = append(progs, ps.get(t, st))
			}
			start := time.Now()
			out, err := check.Execute(context.Background(), progs, in, backend.Order{}, runTimeout)
			if err != nil {
				var f *backend.Failure
				if errors.As(err, &f) {
					t.Fatalf("%v\n%s", err, f.Log)
				}
				t.Fatal(err)
			}
			t.Logf("ran %d stages in %v", len(in.Stages), time.Since(start).Round(time.Millisecond))
			for _, buf := range in.Buffers {
				if buf.Role == spec.Input && !bytes.Equal(out[buf.Name], buf.Data) {
					t.Errorf("input buffer %s was written", buf.Name)
				}
			}
			verify(t, in, out)
		})
	}
}

func data(t *testing.T, in *spec.Instance, name string) []byte {
	t.Helper()
	b := in.Buffer(name)
	if b == nil {
		t.Fatalf("spec has no buffer %q", name)
	}
	return b.Data
}

func params(t *testing.T, in *spec.Instance) ref.Params {
	t.Helper()
	p, err := ref.DecodeParams(data(t, in, "params"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func expectOK(t *testing.T, e *ref.Expect, err error, name string, got []float64) {
	t.Helper()
	if err != nil {
		t.Fatalf("reference %s: %v", name, err)
	}
	if err := e.Check(name, got); err != nil {
		t.Error(err)
	}
}

// verify checks a run with ref.Verify.
func verify(t *testing.T, in *spec.Instance, out map[string][]byte) {
	if err := ref.Verify(in, out); err != nil {
		t.Error(err)
	}
}

// verifyPrompt adds an end-to-end check to verify: the merged chunked
// attention must also match the flash reference.
func verifyPrompt(t *testing.T, in *spec.Instance, out map[string][]byte) {
	verify(t, in, out)
	p := params(t, in)
	flash, err := ref.Flash(p, data(t, in, "q"), data(t, in, "kq"), data(t, in, "ksc"), data(t, in, "vq"), data(t, in, "vsc"), data(t, in, "ids"))
	expectOK(t, flash, err, "out_merge against qsa_flash's reference", ref.Halves(out["out_merge"]))
	if in.Case.Set == "edge" {
		// The edge inputs must reach the outputs, or the set tests nothing.
		nonfinite := 0
		for _, v := range ref.Floats(out["scores"]) {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				nonfinite++
			}
		}
		negzero := 0
		for _, v := range ref.Halves(data(t, in, "q")) {
			if v == 0 && math.Signbit(v) {
				negzero++
			}
		}
		if nonfinite == 0 || negzero == 0 {
			t.Errorf("edge case has %d NaN/+Inf scores and %d negative zeros in q; want both > 0", nonfinite, negzero)
		}
	}
}

// kernelsDir is the directory holding the specs and kernels under test:
// METALAB_QSA_KERNELS when set (to check a modified copy), else the
// bundled ones.
func kernelsDir() string {
	if d := os.Getenv("METALAB_QSA_KERNELS"); d != "" {
		return d
	}
	return ".."
}

func TestPromptKernels(t *testing.T) {
	runSets(t, filepath.Join(kernelsDir(), "qsa_prompt.yaml"), []string{"quick", "fallback", "edge", "cancel"}, verifyPrompt)
}

func TestPrepKernels(t *testing.T) {
	runSets(t, filepath.Join(kernelsDir(), "qsa_prep.yaml"), []string{"quick", "edge", "zeros", "cancel"}, verify)
}

// TestFull runs the full sets: the production shapes take minutes on the
// cpu backend, so they run only when METALAB_FULL=1.
func TestFull(t *testing.T) {
	if os.Getenv("METALAB_FULL") != "1" {
		t.Skip("full sets take minutes on the cpu backend; set METALAB_FULL=1")
	}
	runTimeout = 30 * time.Minute
	t.Run("prompt", func(t *testing.T) {
		runSets(t, filepath.Join(kernelsDir(), "qsa_prompt.yaml"), []string{"full"}, verifyPrompt)
	})
	t.Run("prep", func(t *testing.T) {
		runSets(t, filepath.Join(kernelsDir(), "qsa_prep.yaml"), []string{"full"}, verify)
	})
}

// TestThreadOrders runs some cases under several thread orders: the
// kernels must have no threadgroup race, or the check harness's baseline
// control would fail and no variant could be judged.
func TestThreadOrders(t *testing.T) {
	b := cpuBackend(t)
	for _, f := range []struct {
		file string
		sets []string
	}{
		{"qsa_prompt.yaml", []string{"quick", "fallback", "edge"}},
		{"qsa_prep.yaml", []string{"quick", "edge"}},
	} {
		file := f.file
		s, err := spec.Load(filepath.Join(kernelsDir(), file))
		if err != nil {
			t.Fatal(err)
		}
		cases, err := s.Cases(f.sets...)
		if err != nil {
			t.Fatal(err)
		}
		ps := &programs{b: b, texts: map[string][]byte{}, progs: map[string]backend.Program{}}
		for _, c := range cases {
			t.Run(file+"/"+c.Set+"/"+c.Name, func(t *testing.T) {
				in, err := s.Instantiate(c)
				if err != nil {
					t.Fatal(err)
				}
				var progs []backend.Program
				for _, st := range in.Stages {
					progs = append(progs, ps.get(t, st))
				}
				var want map[string][]byte
				for _, o := range []backend.Order{{}, {Kind: "reversed"}, {Kind: "shuffle", Seed: 1}, {Kind: "shuffle", Seed: 7}} {
					got, err := check.Execute(context.Background(), progs, in, o, 2*time.Minute)
					if err != nil {
						t.Fatalf("%v: %v", o, err)
					}
					if want == nil {
						want = got
						continue
					}
					if m := check.Compare(in, want, got); m != nil {
						t.Errorf("order %v changes the output: %v", o, m)
					}
				}
			})
		}
		ps.close()
	}
}
