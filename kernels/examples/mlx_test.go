package examples_test

import (
	"math"

	"metalab/spec"
)

// mlxRef is the reference of mlx/kernels.yaml.
func mlxRef(in *spec.Instance) map[string]want {
	rows, ax, rn := intVar(in, "ROWS"), intVar(in, "AX"), intVar(in, "RN")
	m, k := intVar(in, "M"), intVar(in, "K")
	out := map[string]want{}

	// Softmax in float, and of half rows: accumulated in half, each
	// exp rounded to half and the sum too, or in float (precise).
	xs, xh := input(in, "xs"), input(in, "xh")
	sm32, sm16, smp16 := make([]float64, rows*ax), make([]float64, rows*ax), make([]float64, rows*ax)
	for r := 0; r < rows; r++ {
		softmax(xs[r*ax:(r+1)*ax], 1, sm32[r*ax:(r+1)*ax])
		softmax(xh[r*ax:(r+1)*ax], 1, smp16[r*ax:(r+1)*ax])
		softmax(xh[r*ax:(r+1)*ax], 1, sm16[r*ax:(r+1)*ax])
	}
	out["sm32"] = relative(sm32, epsF, 1e-7)
	out["smp32"] = relative(sm32, epsF, 1e-7)
	out["smp16"] = relative(smp16, epsH, 1e-5)
	// Half accumulation rounds every exp and partial sum to half: within
	// the half tolerance at these row lengths.
	out["sm16"] = relative(sm16, epsH, 1e-5)

	// Row sums and maxima.
	rx, rxh := input(in, "rx"), input(in, "rxh")
	rsum, rmax, rsumh := make([]float64, rows), make([]float64, rows), make([]float64, rows)
	sumTol, sumhTol := make([]float64, rows), make([]float64, rows)
	for r := 0; r < rows; r++ {
		rmax[r] = math.Inf(-1)
		for i := 0; i < rn; i++ {
			rsum[r] += rx[r*rn+i]
			sumTol[r] += math.Abs(rx[r*rn+i]) * epsF
			rmax[r] = math.Max(rmax[r], rx[r*rn+i])
			rsumh[r] += rxh[r*rn+i]
			sumhTol[r] += math.Abs(rxh[r*rn+i]) * epsF
		}
	}
	out["rsum"], out["rmax"], out["rsumh"] = want{rsum, sumTol}, exact(rmax), want{rsumh, sumhTol}

	// Mat-vec products.
	mat, vec := input(in, "mat"), input(in, "vec")
	g, gTol := make([]float64, m), make([]float64, m)
	for r := 0; r < m; r++ {
		for c := 0; c < k; c++ {
			g[r] += mat[r*k+c] * vec[c]
			gTol[r] += math.Abs(mat[r*k+c]*vec[c]) * epsF
		}
	}
	for _, name := range []string{"g44", "g81", "g14"} {
		out[name] = want{g, gTol}
	}
	return out
}
