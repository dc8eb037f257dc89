package examples_test

import (
	"math"

	"metalab/spec"
)

// mfaRef is the reference of mfa/attention.yaml: o = softmax(q k^T * s) v
// per query row, s the scale constant when it is set, else 1/sqrt(D).
func mfaRef(in *spec.Instance) map[string]want {
	r, c, d := intVar(in, "R"), intVar(in, "C"), intVar(in, "D")
	q, k, v := input(in, "q"), input(in, "k"), input(in, "v")
	s := 1 / math.Sqrt(float64(d))
	if sc, ok := in.Stages[0].Constants["scale"]; ok {
		s = float64(math.Float32frombits(uint32(sc.Bits)))
	}
	o, tol := make([]float64, r*d), make([]float64, r*d)
	for i := 0; i < r; i++ {
		scores := make([]float64, c)
		for j := 0; j < c; j++ {
			for x := 0; x < d; x++ {
				scores[j] += q[i*d+x] * s * k[j*d+x]
			}
		}
		p := make([]float64, c)
		softmax(scores, 1, p)
		for x := 0; x < d; x++ {
			for j := 0; j < c; j++ {
				o[i*d+x] += p[j] * v[j*d+x]
				tol[i*d+x] += math.Abs(p[j]*v[j*d+x]) * 4 * epsF
			}
		}
	}
	return map[string]want{"o": {o, tol}}
}
