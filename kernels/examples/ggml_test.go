package examples_test

import (
	"math"

	"metalab/internal/f16"
	"metalab/spec"
)

// ggmlRef is the reference of ggml/ggml-ops.yaml.
func ggmlRef(in *spec.Instance) map[string]want {
	n, rows := intVar(in, "N"), intVar(in, "ROWS")
	k, m := intVar(in, "K"), intVar(in, "M")
	x, x16, y := input(in, "x"), input(in, "x16"), input(in, "y")
	out := map[string]want{}

	// Row sums, accumulated in any order: the tolerance scales with the
	// sum of magnitudes.
	sums, sumTol := make([]float64, rows), make([]float64, rows)
	for r := 0; r < rows; r++ {
		for _, v := range x[r*n : (r+1)*n] {
			sums[r] += v
			sumTol[r] += math.Abs(v) * epsF
		}
	}
	out["sums"] = want{sums, sumTol}

	// RMS norm: x / sqrt(mean(x^2) + eps), the function constant set.
	normed := make([]float64, rows*n)
	for r := 0; r < rows; r++ {
		row := x[r*n : (r+1)*n]
		ss := 0.0
		for _, v := range row {
			ss += v * v
		}
		scale := 1 / math.Sqrt(ss/float64(n)+1e-6)
		for i, v := range row {
			normed[r*n+i] = v * scale
		}
	}
	out["normed"] = relative(normed, epsF, 1e-6)

	// Softmax of x * 0.5; the f16 kernel rounds exp(x) to half before it
	// scales it, then the result.
	soft := make([]float64, rows*n)
	soft16 := make([]float64, rows*n)
	for r := 0; r < rows; r++ {
		softmax(x[r*n:(r+1)*n], 0.5, soft[r*n:(r+1)*n])
		softmax(x16[r*n:(r+1)*n], 0.5, soft16[r*n:(r+1)*n])
	}
	out["soft"] = relative(soft, epsF, 1e-7)
	out["soft16"] = relative(soft16, 2*epsH, 1e-5)

	// Argmax: each thread keeps the first index of its largest value over
	// its strided part of the row; among threads with the row's maximum,
	// the largest of those indices wins (simd_max over select).
	nt := stage(in, "kernel_argmax_f32").Threads.X
	argmax := make([]float64, rows)
	for r := 0; r < rows; r++ {
		row := x[r*n : (r+1)*n]
		best, arg := math.Inf(-1), -1
		for t := 0; t < nt; t++ {
			lmax, larg := math.Inf(-1), -1
			for i := t; i < n; i += nt {
				if row[i] > lmax {
					lmax, larg = row[i], i
				}
			}
			if lmax > best || lmax == best && larg > arg {
				best, arg = lmax, larg
			}
		}
		argmax[r] = float64(arg)
	}
	out["argmax"] = exact(argmax)

	// Elementwise operations through the function-pointer parameter,
	// exact in float.
	added, multiplied, maxed := make([]float64, rows*n), make([]float64, rows*n), make([]float64, rows*n)
	for i := range x {
		added[i] = f32(x[i] + y[i])
		multiplied[i] = f32(x[i] * y[i])
		maxed[i] = math.Max(x[i], y[i])
	}
	out["added"], out["multiplied"], out["maxed"] = exact(added), exact(multiplied), exact(maxed)

	// q4_0 mat-vec: each block of 32 weights is d * (nibble - 8), the low
	// nibbles the block's first 16 weights.
	q, v := input(in, "q"), input(in, "v")
	mv, mvTol := make([]float64, m), make([]float64, m)
	nb := k / 32
	for r := 0; r < m; r++ {
		for ib := 0; ib < nb; ib++ {
			blk := q[(r*nb+ib)*17 : (r*nb+ib+1)*17]
			d, qs := blk[0], blk[1:]
			for j := 0; j < 16; j++ {
				b := int(qs[j])
				lo, hi := float64(b&0xF)-8, float64(b>>4)-8
				t := d*lo*v[ib*32+j] + d*hi*v[ib*32+j+16]
				mv[r] += t
				mvTol[r] += (math.Abs(d*lo*v[ib*32+j]) + math.Abs(d*hi*v[ib*32+j+16])) * epsF
			}
		}
	}
	out["mv"] = want{mv, mvTol}
	return out
}

// softmax writes the softmax of row*scale to dst.
func softmax(row []float64, scale float64, dst []float64) {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, v*scale)
	}
	sum := 0.0
	for i, v := range row {
		dst[i] = math.Exp(v*scale - mx)
		sum += dst[i]
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// half rounds to binary16.
func half(x float64) float64 { return f16.ToFloat64(f16.FromFloat64(x)) }
