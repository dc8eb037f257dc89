// Package examples_test runs the example kernels written in the styles of
// ggml, MLX, candle and metal-flash-attention from their unmodified
// sources (headers from include/, only includes: and defines: in their
// specs) on the cpu backend, in the checking mode, and compares every
// output element with a float64 reference written here in Go.
// METALAB_TEST_BACKEND=cuda runs them on the GPU instead (no checking
// mode there: only the references judge).
package examples_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"metalab/backend"
	"metalab/backend/backendtest"
	"metalab/check"
	"metalab/spec"
)

// A want is the reference of one output buffer: the expected values and,
// per element, how far the kernel may be from them.
type want struct {
	vals []float64
	tol  []float64
}

// A reference computes the expected output buffers of a case.
type reference func(in *spec.Instance) map[string]want

// styles are the example specs and their references.
var styles = []struct {
	spec string
	ref  reference
}{
	{"ggml/ggml-ops.yaml", ggmlRef},
	{"mlx/kernels.yaml", mlxRef},
	{"candle/candle-ops.yaml", candleRef},
	{"mfa/attention.yaml", mfaRef},
}

// TestStyles runs every case of every example spec and holds each output
// buffer to its reference; a buffer without one is an error, so nothing a
// spec computes goes unchecked.
func TestStyles(t *testing.T) {
	b := backendtest.Selected(t)
	checking := b.Info(context.Background()).Check
	for _, st := range styles {
		t.Run(filepath.Dir(st.spec), func(t *testing.T) {
			s, err := spec.Load(st.spec)
			if err != nil {
				t.Fatal(err)
			}
			cases, err := s.Cases()
			if err != nil {
				t.Fatal(err)
			}
			if len(cases) == 0 {
				t.Fatal("the spec has no cases")
			}
			progs := map[string]backend.Program{}
			defer func() {
				for _, p := range progs {
					p.Close()
				}
			}()
			for _, c := range cases {
				in, err := s.Instantiate(c)
				if err != nil {
					t.Fatal(err)
				}
				name := c.Set + "/" + c.Name
				if err := in.CheckKernels(os.ReadFile); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var ps []backend.Program
				for _, stg := range in.Stages {
					ps = append(ps, compile(t, b, progs, stg, checking))
				}
				ex, err := check.ExecuteCase(context.Background(), ps, in, check.ExecOptions{Order: backend.Order{Kind: "in-order"}})
				if err != nil {
					var f *backend.Failure
					if errors.As(err, &f) {
						t.Fatalf("%s: %v\n%s", name, err, f.Log)
					}
					t.Fatalf("%s: %v", name, err)
				}
				for _, f := range ex.Findings() {
					if !f.Kind.IsWarning() {
						t.Errorf("%s: the checking mode found %s in %s: %+v", name, f.Kind, f.Entry, f.Finding)
					}
				}
				wants := st.ref(in)
				checked := 0
				for _, buf := range in.Buffers {
					if buf.Role != spec.Output && buf.Role != spec.InOut {
						continue
					}
					w, ok := wants[buf.Name]
					if !ok {
						t.Errorf("%s: output %s has no reference", name, buf.Name)
						continue
					}
					compare(t, name, buf, ex.Outputs[buf.Name], w)
					checked++
				}
				if checked == 0 {
					t.Errorf("%s: no output checked", name)
				}
				t.Logf("%s: %d outputs of %d stages checked", name, checked, len(in.Stages))
			}
		})
	}
}

// compile compiles a stage (in the checking mode, with check), once per
// entry, source and configuration.
func compile(t *testing.T, b backend.Backend, progs map[string]backend.Program, st *spec.Stage, check bool) backend.Program {
	t.Helper()
	key := st.Source + "\x00" + st.Entry + "\x00" + st.ConfigKey()
	if p, ok := progs[key]; ok {
		return p
	}
	text, err := os.ReadFile(st.Source)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Compile(context.Background(), backend.Source{
		Name: st.Source, Text: text, Dir: filepath.Dir(st.Source), IncludeDirs: st.IncludeDirs,
		Entry: st.Entry, Defines: st.Defines, Constants: st.Constants, Check: check,
	})
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) {
			t.Fatalf("compile %s %s: %v\n%s", st.Source, st.Entry, err, f.Log)
		}
		t.Fatalf("compile %s %s: %v", st.Source, st.Entry, err)
	}
	progs[key] = p
	return p
}

// compare holds the bytes of an output buffer to its reference, reporting
// the first few elements out of tolerance.
func compare(t *testing.T, name string, buf *spec.Buffer, got []byte, w want) {
	t.Helper()
	vals := spec.Decode(buf.Type, got[:buf.Count*buf.Type.Size])
	if len(vals) != len(w.vals) {
		t.Errorf("%s: %s has %d values, the reference %d", name, buf.Name, len(vals), len(w.vals))
		return
	}
	bad := 0
	for i, v := range vals {
		if math.Abs(v-w.vals[i]) <= w.tol[i] || v == w.vals[i] {
			continue
		}
		if bad++; bad <= 5 {
			t.Errorf("%s: %s[%d] = %v, want %v ± %.3g", name, buf.Name, i, v, w.vals[i], w.tol[i])
		}
	}
	if bad > 5 {
		t.Errorf("%s: %s: %d of %d elements out of tolerance", name, buf.Name, bad, len(vals))
	}
}

// input decodes an input buffer of a case.
func input(in *spec.Instance, name string) []float64 {
	b := in.Buffer(name)
	return spec.Decode(b.Type, b.Data[:b.Count*b.Type.Size])
}

// ints reads a case variable.
func intVar(in *spec.Instance, name string) int {
	switch v := in.Vars[name].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	panic("no integer variable " + name)
}

// stage returns the case's stage of an entry.
func stage(in *spec.Instance, entry string) *spec.Stage {
	for _, st := range in.Stages {
		if st.Entry == entry {
			return st
		}
	}
	panic("no stage " + entry)
}

// exact is a reference the kernel must meet bit for bit.
func exact(vals []float64) want {
	return want{vals: vals, tol: make([]float64, len(vals))}
}

// relative is a reference with tolerance rel*|v| + abs per element.
func relative(vals []float64, rel, abs float64) want {
	tol := make([]float64, len(vals))
	for i, v := range vals {
		tol[i] = rel*math.Abs(v) + abs
	}
	return want{vals: vals, tol: tol}
}

// f32 rounds to float32, as a float kernel stores.
func f32(x float64) float64 { return float64(float32(x)) }

// Float tolerances: float32 rounding of results computed in a different
// order, and binary16 for half results.
const (
	epsF = 1e-5
	epsH = 2e-3
)
