package prelude

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// refMatmul is the documented order: for each element, fused multiply-adds
// over k = 0..7 in order starting from c (or zero), each rounded by round.
func refMatmul(a, b, c []f32, round func(f32) f32) []f32 {
	out := make([]f32, 64)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			var acc f32
			if c != nil {
				acc = c[i*8+j]
			}
			for k := 0; k < 8; k++ {
				acc = round(fma32(a[i*8+k], b[k*8+j], acc))
			}
			out[i*8+j] = acc
		}
	}
	return out
}

// laneCoord is the row and first column of lane l's two elements of an 8x8
// simdgroup matrix on Apple GPUs, written the way MLX's steel GEMM computes
// it (BaseMMAFrag::get_coord): quad id qid = l/4, row (qid & 4) + (l/2)%4,
// column (qid & 2)*2 + (l%2)*2.
func laneCoord(l int) (row, col int) {
	qid := l / 4
	return (qid & 4) + (l/2)%4, (qid&2)*2 + (l%2)*2
}

func hexFloats(v []f32) string {
	var b strings.Builder
	for _, x := range v {
		fmt.Fprintf(&b, "%x ", math.Float32bits(x))
	}
	return strings.TrimSpace(b.String())
}

func TestSimdgroupMatrix(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	mat := func() []f32 {
		m := make([]f32, 64)
		for i := range m {
			m[i] = f32(r.Float64()*4 - 2)
		}
		return m
	}
	a, b, c := mat(), mat(), mat()
	var in strings.Builder
	for _, m := range [][]f32{a, b, c} {
		for _, x := range m {
			fmt.Fprintf(&in, "%x\n", math.Float32bits(x))
		}
	}
	out := lines(buildRun(t, readTestdata(t, "matrix.cpp"), in.String()))
	if len(out) != 14 {
		t.Fatalf("got %d lines", len(out))
	}
	ident := func(x f32) f32 { return x }
	line := 0
	check := func(what, want string) {
		t.Helper()
		if got := strings.TrimSpace(out[line]); got != want {
			t.Errorf("%s:\n got %s\nwant %s", what, got, want)
		}
		line++
	}
	check("A*B", hexFloats(refMatmul(a, b, nil, ident)))
	check("A*B+C", hexFloats(refMatmul(a, b, c, ident)))
	ha, hb, hc := make([]f32, 64), make([]f32, 64), make([]f32, 64)
	for i := range ha {
		ha[i], hb[i], hc[i] = halfOf(a[i]), halfOf(b[i]), halfOf(c[i])
	}
	var hw strings.Builder
	for _, x := range refMatmul(ha, hb, hc, halfOf) {
		fmt.Fprintf(&hw, "%x ", refHalf(float64(x)))
	}
	check("half A*B+C", strings.TrimSpace(hw.String()))
	check("half A*B + float C into float", hexFloats(refMatmul(ha, hb, c, ident)))
	check("C = A*B+C in place in memory", hexFloats(refMatmul(a, b, c, ident)))
	check("Q = Q*B in place", hexFloats(refMatmul(a, b, nil, ident)))
	scaled := append([]f32(nil), a...)
	for l := 0; l < 32; l++ {
		row, col := laneCoord(l) // lane l owns (row, col), (row, col+1) and scaled them by l+1
		scaled[row*8+col] *= f32(l + 1)
		scaled[row*8+col+1] *= f32(l + 1)
	}
	check("product after thread_elements writes", hexFloats(refMatmul(scaled, b, nil, ident)))

	big := func(row, col int) f32 { return f32(row*16 + col) }
	load := make([]f32, 64)
	trans := make([]f32, 64)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			load[i*8+j] = big(5+i, 3+j)
			trans[i*8+j] = big(1+j, 2+i)
		}
	}
	check("load at origin (3,5) stride 16", hexFloats(load))
	check("transposed load at origin (2,1)", hexFloats(trans))
	dst := make([]string, 256)
	for i := range dst {
		dst[i] = "0"
	}
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			dst[(6+j)*16+4+i] = fmt.Sprint(load[i*8+j])
		}
	}
	check("transposed store at origin (4,6)", strings.Join(dst, " "))
	filled, diag := make([]f32, 64), make([]f32, 64)
	for i := range filled {
		filled[i] = 2.5
		if i%9 == 0 {
			diag[i] = 3
		}
	}
	check("make_filled_simdgroup_matrix", hexFloats(filled))
	check("diagonal constructor", hexFloats(diag))
	te := make([]string, 64)
	for l := 0; l < 32; l++ {
		// Lane l holds elements (row, col) and (row, col+1) of the 8-wide
		// source, whose values are their row-major indices.
		row, col := laneCoord(l)
		te[2*l] = fmt.Sprint(row*8 + col)
		te[2*l+1] = fmt.Sprint(row*8 + col + 1)
	}
	// Every element is owned by exactly one lane.
	owned := map[int]int{}
	for l := 0; l < 32; l++ {
		row, col := laneCoord(l)
		owned[row*8+col]++
		owned[row*8+col+1]++
	}
	if len(owned) != 64 {
		t.Errorf("laneCoord covers %d elements, want 64", len(owned))
	}
	check("thread_elements", strings.Join(te, " "))
	check("(A*B)*C by operator*", hexFloats(refMatmul(refMatmul(a, b, nil, ident), c, nil, ident)))
}

func TestMatrixTypes(t *testing.T) {
	src := `#include <cstdio>
#include <metal_stdlib>
using namespace metal;
template <int N> void pr(vec<float, N> v) { for (int i = 0; i < N; i++) std::printf("%g ", v[i]); }
int main() {
  float3x3 m(float3(1, 2, 3), float3(4, 5, 6), float3(7, 8, 10));
  float2x3 n(1, 2, 3, 4, 5, 6);  // two columns of three, column-major
  float3 v(1, -2, 3);
  pr(m * v); std::printf("\n");
  pr(n * float2(2, -1)); std::printf("\n");
  pr(v * n); std::printf("\n");
  float2x3 p = m * n;
  pr(p[0]); pr(p[1]); std::printf("\n");
  float3x2 tr = transpose(n);
  pr(tr[0]); pr(tr[1]); pr(tr[2]); std::printf("\n");
  float4x4 d(2.0f);
  pr(d * float4(1, 2, 3, 4)); std::printf("\n");
  half2x2 h(half2(half(1), half(2)), half2(half(3), half(4)));
  half2 hv = h * half2(half(1), half(1));
  std::printf("%g %g\n", float(hv.x), float(hv.y));
}
`
	out := lines(buildRun(t, src, ""))
	m := [3][3]float64{{1, 2, 3}, {4, 5, 6}, {7, 8, 10}} // columns
	n := [2][3]float64{{1, 2, 3}, {4, 5, 6}}
	v := []float64{1, -2, 3}
	mulMV := func(cols [][]float64, x []float64) []float64 {
		r := make([]float64, len(cols[0]))
		for c, col := range cols {
			for i := range r {
				r[i] += col[i] * x[c]
			}
		}
		return r
	}
	cols := func(a [][3]float64) [][]float64 {
		var r [][]float64
		for i := range a {
			r = append(r, a[i][:])
		}
		return r
	}
	fmtv := func(vs ...[]float64) string {
		var b strings.Builder
		for _, v := range vs {
			for _, x := range v {
				fmt.Fprintf(&b, "%g ", x)
			}
		}
		return strings.TrimSpace(b.String())
	}
	mc, nc := cols(m[:]), cols(n[:])
	var vn []float64
	for _, col := range nc {
		vn = append(vn, col[0]*v[0]+col[1]*v[1]+col[2]*v[2])
	}
	var tr [][]float64
	for i := 0; i < 3; i++ {
		tr = append(tr, []float64{n[0][i], n[1][i]})
	}
	want := []string{
		fmtv(mulMV(mc, v)),
		fmtv(mulMV(nc, []float64{2, -1})),
		fmtv(vn),
		fmtv(mulMV(mc, nc[0]), mulMV(mc, nc[1])),
		fmtv(tr...),
		"2 4 6 8",
		"4 6",
	}
	if len(out) != len(want) {
		t.Fatalf("got %d lines: %q", len(out), out)
	}
	for i := range want {
		if strings.TrimSpace(out[i]) != want[i] {
			t.Errorf("line %d: got %q, want %q", i, out[i], want[i])
		}
	}
}
