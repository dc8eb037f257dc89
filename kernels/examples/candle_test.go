package examples_test

import (
	"math"

	"metalab/spec"
)

// candleRef is the reference of candle/candle-ops.yaml.
func candleRef(in *spec.Instance) map[string]want {
	r, c := intVar(in, "R"), intVar(in, "C")
	numel, block := intVar(in, "NUMEL"), intVar(in, "BLOCK")
	el := r * c
	out := map[string]want{}

	a, ah := input(in, "a"), input(in, "ah")
	sq, ex16, neg := make([]float64, el), make([]float64, el), make([]float64, el)
	for i := 0; i < el; i++ {
		sq[i] = f32(math.Sqrt(a[i]))
		ex16[i] = half(math.Exp(ah[i]))
		neg[i] = -a[i]
	}
	out["sqrt_out"], out["neg_out"] = exact(sq), exact(neg)
	out["exp16_out"] = relative(ex16, epsH, 0)

	// The strided kernels read the R x C input through dims [C, R] and
	// strides [1, C]: the output is its C x R transpose.
	sqrT, expT := make([]float64, el), make([]float64, el)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := a[i*c+j]
			sqrT[j*r+i] = f32(v * v)
			expT[j*r+i] = math.Exp(v)
		}
	}
	out["sqr_t"], out["exp_t"] = exact(sqrT), relative(expT, epsF, 0)

	// Block reductions: thread t of BD folds elements t, t+BD, ... of its
	// block, then a tree halves the threads; on equal maxima the lower
	// thread wins, and a thread keeps the first of its equal maxima.
	src := input(in, "src")
	bd := stage(in, "fast_argmax_f32").Threads.X
	nb := (numel + block - 1) / block
	bsum, sumTol, bmax, barg := make([]float64, nb), make([]float64, nb), make([]float64, nb), make([]float64, nb)
	for b := 0; b < nb; b++ {
		lo, hi := b*block, min((b+1)*block, numel)
		bmax[b] = math.Inf(-1)
		best, bestT := math.Inf(-1), -1
		for t := 0; t < bd; t++ {
			lmax, larg, set := math.Inf(-1), -1, false
			for i := lo + t; i < hi; i += bd {
				if !set || src[i] > lmax {
					lmax, larg, set = src[i], i%block, true
				}
			}
			if set && (bestT < 0 || lmax > best) {
				best, bestT = lmax, larg
			}
		}
		for i := lo; i < hi; i++ {
			bsum[b] += src[i]
			sumTol[b] += math.Abs(src[i]) * epsF
			bmax[b] = math.Max(bmax[b], src[i])
		}
		barg[b] = float64(bestT)
	}
	out["bsum"], out["bmax"], out["barg"] = want{bsum, sumTol}, exact(bmax), exact(barg)
	return out
}
