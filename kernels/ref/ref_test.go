package ref

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"metalab/internal/f16"
)

// inputs is a small random attention problem in kernel byte layouts.
type inputs struct {
	p                        Params
	q, kq, ksc, vq, vsc, ids []byte
}

func halfBytes(vs []float64) []byte {
	b := make([]byte, 2*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint16(b[2*i:], f16.FromFloat64(v))
	}
	return b
}

func newInputs(seed uint64, t, pos0, h, kvh, sel int) *inputs {
	r := rand.New(rand.NewPCG(seed, 1))
	nsel := (sel + Chunk - 1) / Chunk * Chunk
	in := &inputs{p: Params{T: t, Pos0: pos0, H: h, KVH: kvh, NSel: nsel, NCells: pos0 + t, Scale: float64(float32(1 / math.Sqrt(128)))}}
	rows := in.p.NCells * kvh
	uni := func(n int, lo, hi float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = lo + (hi-lo)*r.Float64()
		}
		return out
	}
	i8 := func(n int) []byte {
		out := make([]byte, n)
		for i := range out {
			out[i] = byte(int8(r.IntN(255) - 127))
		}
		return out
	}
	in.q = halfBytes(uni(t*h*D, -1, 1))
	in.kq, in.vq = i8(rows*D), i8(rows*D)
	in.ksc, in.vsc = halfBytes(uni(rows*4, 0.002, 0.03)), halfBytes(uni(rows*4, 0.002, 0.03))
	in.ids = make([]byte, 4*t*nsel)
	for row := range t {
		m := pos0 + row
		k := min(sel, m+1)
		for j := range nsel {
			id := -1
			if row%5 != 2 && j < k {
				id = m
				if k > 1 {
					id = j * m / (k - 1)
				}
			}
			binary.LittleEndian.PutUint32(in.ids[4*(row*nsel+j):], uint32(int32(id)))
		}
	}
	return in
}

func TestExpectMatch(t *testing.T) {
	e := &Expect{
		Want:  []float64{1, math.NaN(), math.Inf(1), math.Inf(-1), 0, 0, 2},
		Bound: []float64{0.5, 0, 0, 0, 0, 0, 0},
	}
	tests := []struct {
		i    int
		got  float64
		want bool
	}{
		{0, 1.5, true},
		{0, 1.5000001, false},
		{0, math.NaN(), false},
		{0, math.Inf(1), false},
		{1, math.NaN(), true},
		{1, 0, false},
		{2, math.Inf(1), true},
		{2, math.Inf(-1), false},
		{2, math.MaxFloat64, false},
		{3, math.Inf(-1), true},
		{4, math.Copysign(0, -1), true},
		{5, 1e-45, false},
		{6, 2, true},
	}
	for _, tt := range tests {
		if got := e.Match(tt.i, tt.got); got != tt.want {
			t.Errorf("Match(%d, %g) = %v, want %v", tt.i, tt.got, got, tt.want)
		}
	}
	err := e.Check("out", []float64{1.7, 0, math.Inf(1), math.Inf(-1), 0, 0, 2})
	m, ok := err.(*Mismatch)
	if !ok || m == nil {
		t.Fatalf("Check = %v (%T), want a *Mismatch", err, err)
	}
	if m.Count != 2 || len(m.First) != 2 || m.First[0] != 0 || m.First[1] != 1 {
		t.Errorf("Check = %v, want a mismatch at elements 0 and 1", err)
	}
	if err := e.Check("out", []float64{1}); err == nil {
		t.Error("Check accepted a short output")
	}
}

// rounded returns the fp16 rounding of e's expected values, as a correct
// kernel would write them with no other error.
func rounded(e *Expect) []float64 {
	out := make([]float64, len(e.Want))
	for i, w := range e.Want {
		out[i] = f16.ToFloat64(f16.FromFloat64(w))
	}
	return out
}

// TestFlashSharp shows the flash bounds are tight: the fp16 rounding of
// the exact result passes, but a few fp16 ulps on one element, or a kernel
// that drops one cell per row, fail.
func TestFlashSharp(t *testing.T) {
	in := newInputs(1, 12, 70, 4, 2, 100)
	e, err := Flash(in.p, in.q, in.kq, in.ksc, in.vq, in.vsc, in.ids)
	if err != nil {
		t.Fatal(err)
	}
	got := rounded(e)
	if err := e.Check("out", got); err != nil {
		t.Fatalf("exact result rejected: %v", err)
	}
	// Bounds stay within a few fp16 ulps of each value plus a small
	// absolute term for outputs that cancel (values here are of order 1).
	for i, w := range e.Want {
		if b := 4*math.Abs(w)*0x1p-10 + 5e-4; e.Bound[i] > b {
			t.Fatalf("bound %g of element %d (want %g) exceeds %g", e.Bound[i], i, w, b)
		}
	}
	i := 3*D + 17
	got[i] += 2*e.Bound[i] + 0x1p-14
	if err := e.Check("out", got); err == nil {
		t.Error("an element twice its bound away passed")
	}

	// Drop the last selected cell of every row.
	ids := Int32s(in.ids)
	for row := range in.p.T {
		for j := in.p.NSel - 1; j >= 0; j-- {
			if id := ids[row*in.p.NSel+j]; id >= 0 {
				binary.LittleEndian.PutUint32(in.ids[4*(row*in.p.NSel+j):], uint32(0xffffffff))
				break
			}
		}
	}
	wrong, err := Flash(in.p, in.q, in.kq, in.ksc, in.vq, in.vsc, in.ids)
	if err != nil {
		t.Fatal(err)
	}
	err = e.Check("out", rounded(wrong))
	m, ok := err.(*Mismatch)
	if !ok || m == nil {
		t.Fatalf("dropping one cell per row: Check = %v (%T), want a *Mismatch", err, err)
	}
	if m.Count < m.Total/4 || m.Total != len(e.Want) {
		t.Errorf("dropping one cell per row: got %v, want most elements to fail", err)
	}
}

// TestAttnPartMerges checks the two references agree: merging the chunk
// partials in float64 gives the flash result.
func TestAttnPartMerges(t *testing.T) {
	in := newInputs(2, 9, 130, 4, 2, 150)
	flash, err := Flash(in.p, in.q, in.kq, in.ksc, in.vq, in.vsc, in.ids)
	if err != nil {
		t.Fatal(err)
	}
	part, err := AttnPart(in.p, in.q, in.kq, in.ksc, in.vq, in.vsc, in.ids)
	if err != nil {
		t.Fatal(err)
	}
	nch := in.p.NSel / Chunk
	empty := 0
	for row := range in.p.T {
		for h := range in.p.H {
			src := part.Want[(row*in.p.H+h)*nch*PartStride:]
			mx := math.Inf(-1)
			for ch := range nch {
				mx = max(mx, src[ch*PartStride+D])
			}
			var l float64
			num := make([]float64, D)
			for ch := range nch {
				m := src[ch*PartStride+D]
				if math.IsInf(m, -1) {
					continue
				}
				w := math.Exp(m - mx)
				l += src[ch*PartStride+D+1] * w
				for d := range D {
					num[d] += src[ch*PartStride+d] * w
				}
			}
			if l == 0 {
				empty++
			}
			for d := range D {
				want := flash.Want[(row*in.p.H+h)*D+d]
				got := 0.0
				if l > 0 {
					got = num[d] / l
				}
				if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("t=%d h=%d d=%d: merged %g, flash %g", row, h, d, got, want)
				}
			}
		}
	}
	if empty == 0 {
		t.Error("no row without selection: the test lost its empty-row case")
	}
}

// TestScoreMask checks which score elements are computed, dead or kept.
func TestScoreMask(t *testing.T) {
	p := Params{T: 3, Pos0: 62, H: 2, KVH: 1, NPool: 4, NValid: 2, Scale: 0.5}
	q := make([]float64, p.T*p.H*D)
	k := make([]float64, p.NPool*D)
	q[(1*p.H+1)*D+5] = 2 // t=1, h=1, d=5
	k[0*D+5] = 3         // key 0
	k[1*D+5] = -1        // key 1
	kb := make([]byte, 4*len(k))
	for i, v := range k {
		binary.LittleEndian.PutUint32(kb[4*i:], math.Float32bits(float32(v)))
	}
	prefill := make([]byte, 4*p.H*p.T*p.NPool)
	for i := range prefill {
		prefill[i] = 0xa5
	}
	e, err := Score(p, halfBytes(q), kb, prefill)
	if err != nil {
		t.Fatal(err)
	}
	sentinel := float64(math.Float32frombits(0xa5a5a5a5))
	at := func(h, t, j int) float64 { return e.Want[(h*p.T+t)*p.NPool+j] }
	// Positions 62, 63, 64: key 1 (cells 64..127) is visible from t=2 only.
	if got := at(1, 1, 0); got != 3 {
		t.Errorf("score h1 t1 key0 = %g, want 3", got)
	}
	if got := at(1, 1, 1); got != sentinel {
		t.Errorf("beyond-causal score = %g, want the prefill %g", got, sentinel)
	}
	if got := at(0, 2, 1); got != 0 {
		t.Errorf("score h0 t2 key1 = %g, want 0", got)
	}
	for _, j := range []int{2, 3} {
		if got := at(0, 0, j); !math.IsInf(got, -1) {
			t.Errorf("dead key %d = %g, want -Inf", j, got)
		}
	}
}

// quantize is a plain float64 model of the kernel's group quantisation.
func quantize(x []float64) (q []byte, sc []byte) {
	q = make([]byte, len(x))
	sc = make([]byte, 2*len(x)/Group)
	for g := 0; g < len(x)/Group; g++ {
		var amax float64
		for _, v := range x[g*Group : (g+1)*Group] {
			amax = max(amax, math.Abs(v))
		}
		h := f16.FromFloat64(amax / 127)
		binary.LittleEndian.PutUint16(sc[2*g:], h)
		s := f16.ToFloat64(h)
		for i := g * Group; i < (g+1)*Group; i++ {
			if s > 0 {
				q[i] = byte(int8(quant(x[i] / s)))
			}
		}
	}
	return q, sc
}

// TestCheckQuant checks that CheckQuant accepts a correct quantisation and
// rejects an int8 off by one away from a rounding boundary, a wrong scale,
// and a write outside the batch.
func TestCheckQuant(t *testing.T) {
	p := Params{T: 2, Pos0: 1, H: 2, KVH: 1, NCells: 4}
	r := rand.New(rand.NewPCG(3, 4))
	want := newExpect(p.T * p.KVH * D)
	for i := range want.Want {
		want.Want[i] = r.NormFloat64()
		want.Bound[i] = 1e-6 * math.Abs(want.Want[i])
	}
	orig8 := make([]byte, p.NCells*p.KVH*D)
	origSc := make([]byte, p.NCells*p.KVH*D/Group*2)
	for i := range orig8 {
		orig8[i] = byte(r.IntN(256))
	}
	for i := range origSc {
		origSc[i] = byte(r.IntN(256))
	}
	build := func() ([]byte, []byte) {
		q8 := append([]byte(nil), orig8...)
		sc := append([]byte(nil), origSc...)
		q, s := quantize(want.Want)
		copy(q8[p.Pos0*p.KVH*D:], q)
		copy(sc[p.Pos0*p.KVH*D/Group*2:], s)
		return q8, sc
	}
	q8, sc := build()
	if err := CheckQuant("kq", p, want, orig8, origSc, q8, sc); err != nil {
		t.Fatalf("correct quantisation rejected: %v", err)
	}

	// An element whose x/scale is far from a rounding boundary.
	s0 := f16.ToFloat64(binary.LittleEndian.Uint16(sc[p.Pos0*p.KVH*D/Group*2:]))
	k := -1
	for i := range Group {
		f := want.Want[i] / s0
		if fr := math.Abs(f - math.Trunc(f)); fr > 0.1 && fr < 0.4 && math.Abs(f) < 120 {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatal("no element away from a rounding boundary")
	}
	q8[p.Pos0*p.KVH*D+k]++
	if err := CheckQuant("kq", p, want, orig8, origSc, q8, sc); err == nil || !strings.Contains(err.Error(), "want") {
		t.Errorf("int8 off by one passed: %v", err)
	}

	q8, sc = build()
	binary.LittleEndian.PutUint16(sc[p.Pos0*p.KVH*D/Group*2:], f16.FromFloat64(s0*1.01))
	if err := CheckQuant("kq", p, want, orig8, origSc, q8, sc); err == nil {
		t.Error("scale 1% off passed")
	}

	q8, sc = build()
	q8[0] ^= 1 // cell 0 is before the batch
	if err := CheckQuant("kq", p, want, orig8, origSc, q8, sc); err == nil {
		t.Error("write outside the batch passed")
	}
}

// TestPrepRotation checks the reference's norm and rotation on a row
// whose result is known: x = 1 everywhere, g = 1, rotation by 90 degrees.
func TestPrepRotation(t *testing.T) {
	p := Params{T: 1, Pos0: 2, H: 2, KVH: 1, NCells: 3, NPos: 3, Eps: 0}
	n := (p.H + 2*p.KVH) * D
	x := make([]byte, 4*n)
	g := make([]byte, 4*n)
	for i := range n {
		v := 1.0
		if i%D == 40 {
			v = -1 // dim 40 is the partner of dim 8
		}
		binary.LittleEndian.PutUint32(x[4*i:], math.Float32bits(float32(v)))
		binary.LittleEndian.PutUint32(g[4*i:], math.Float32bits(1))
	}
	rope := make([]byte, 8*p.NPos*Rot/2)
	for i := range p.NPos * Rot / 2 {
		binary.LittleEndian.PutUint32(rope[8*i+4:], math.Float32bits(1)) // cos 0, sin 1
	}
	r, err := Prep(p, x, g, rope)
	if err != nil {
		t.Fatal(err)
	}
	// rs = 1: rotated d < 32: -x[d+32]; 32 <= d < 64: x[d-32]; others x[d].
	checks := []struct {
		e    *Expect
		i    int
		want float64
	}{
		{r.Q, 8, 1},      // -x[40]
		{r.Q, 40, 1},     // x[8]
		{r.Q, 0, -1},     // -x[32]
		{r.Q, D + 40, 1}, // head 1
		{r.Q, 100, 1},    // beyond the rotary dims
		{r.K, 8, 1},      // k is rotated too
		{r.K, 9, -1},
		{r.V, 8, 1}, // v is not
		{r.V, 40, -1},
	}
	for _, c := range checks {
		if got := c.e.Want[c.i]; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("element %d = %g, want %g", c.i, got, c.want)
		}
	}
}
