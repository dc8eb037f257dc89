// Package tensor_test runs matmul2d.yaml, MSL 4 tensors and
// MetalPerformancePrimitives' matmul2d through cooperative tensors and
// slices, on the selected backend (the cpu backend in the checking mode;
// METALAB_TEST_BACKEND=cuda runs it on the GPU) and holds every output
// bit for bit to a Go computation in the prelude's accumulation order:
// float, k = 0..K-1 in order, each product rounded to float, then each
// sum (never fused). The same bits on both backends are that order.
package tensor_test

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

// floats decodes a float buffer.
func floats(b []byte, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

func intVar(in *spec.Instance, name string) int {
	switch v := in.Vars[name].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	panic("no integer variable " + name)
}

// matmul is C = A * B in the prelude's order. The float32 conversion of
// each product keeps Go from fusing it into the sum.
func matmul(a, b []float32, m, n, k int) []float32 {
	c := make([]float32, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var acc float32
			for x := 0; x < k; x++ {
				acc = acc + float32(a[i*k+x]*b[x*n+j])
			}
			c[i*n+j] = acc
		}
	}
	return c
}

// rowSums is each 64-wide tile row's sum, left to right, M x N/64.
func rowSums(c []float32, m, n int) []float32 {
	tiles := n / 64
	r := make([]float32, m*tiles)
	for i := 0; i < m; i++ {
		for t := 0; t < tiles; t++ {
			var s float32
			for j := 0; j < 64; j++ {
				s += c[i*n+t*64+j]
			}
			r[i*tiles+t] = s
		}
	}
	return r
}

// TestMatmul2d runs every case of matmul2d.yaml and compares every output
// element's bits.
func TestMatmul2d(t *testing.T) {
	b := backendtest.Selected(t)
	checking := b.Info(context.Background()).Check
	s, err := spec.Load("matmul2d.yaml")
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
	seen64 := false
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
		for _, st := range in.Stages {
			text, err := os.ReadFile(st.Source)
			if err != nil {
				t.Fatal(err)
			}
			p, err := b.Compile(context.Background(), backend.Source{Name: st.Source, Text: text, Dir: filepath.Dir(st.Source),
				IncludeDirs: st.IncludeDirs, Entry: st.Entry, Defines: st.Defines, Constants: st.Constants, Check: checking})
			if err != nil {
				var f *backend.Failure
				if errors.As(err, &f) {
					t.Fatalf("compile %s: %v\n%s", st.Entry, err, f.Log)
				}
				t.Fatalf("compile %s: %v", st.Entry, err)
			}
			defer p.Close()
			ps = append(ps, p)
		}
		ex, err := check.ExecuteCase(context.Background(), ps, in, check.ExecOptions{Order: backend.Order{Kind: "reversed"}})
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
		m, n, k := intVar(in, "M"), intVar(in, "N"), intVar(in, "K")
		seen64 = seen64 || m == 64 && n == 64 && k == 128
		a := floats(in.Buffer("a").Data, m*k)
		bm := floats(in.Buffer("b").Data, k*n)
		want := matmul(a, bm, m, n, k)
		wants := map[string][]float32{"c": want, "c2": want, "rowsum": rowSums(want, m, n)}
		for buf, w := range wants {
			got := floats(ex.Outputs[buf], len(w))
			bad := 0
			for i := range w {
				if math.Float32bits(got[i]) != math.Float32bits(w[i]) {
					if bad++; bad <= 5 {
						t.Errorf("%s: %s[%d] = %v (%#08x), want %v (%#08x)", name, buf, i, got[i], math.Float32bits(got[i]), w[i], math.Float32bits(w[i]))
					}
				}
			}
			if bad > 5 {
				t.Errorf("%s: %s: %d of %d elements differ", name, buf, bad, len(w))
			}
		}
		t.Logf("%s: c, c2 and rowsum bitwise equal to the reference (%d x %d x %d)", name, m, n, k)
	}
	if !seen64 {
		t.Error("no case is the 64x64x128 product")
	}
}

// TestReferenceOrderMatters keeps the reference honest: summing the same
// products in another order changes some bits, so a bitwise pass pins the
// order and not only the values.
func TestReferenceOrderMatters(t *testing.T) {
	const m, n, k = 64, 64, 128
	a, b := make([]float32, m*k), make([]float32, k*n)
	x := uint32(1)
	for i := range a {
		x = x*1664525 + 1013904223
		a[i] = float32(int32(x)) / (1 << 31)
	}
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = float32(int32(x)) / (1 << 31)
	}
	c := matmul(a, b, m, n, k)
	differ := 0
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var acc float32
			for y := k - 1; y >= 0; y-- {
				acc = acc + float32(a[i*k+y]*b[y*n+j])
			}
			if acc != c[i*n+j] {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Fatal("summing k backwards gives the same bits everywhere: the bitwise test would not pin the order")
	}
	t.Logf("%d of %d elements differ when k is summed backwards", differ, m*n)
}
