package conformance

import (
	"math"

	"metalab/backend"
	"metalab/internal/f16"
)

// stdlibCases are the conformance cases of the metal_stdlib rows of the
// prelude's README table: kernels written the way ggml and MLX write them
// (type traits in templates, numeric_limits in a softmax, unions with
// half, vector-with-scalar math, simdgroup matrices filled through
// thread_elements()), each checked against a Go computation.
func stdlibCases() []tcase {
	var cs []tcase
	cs = append(cs, limitsTableCase(), softmaxCase(false), softmaxCase(true), traitsCase(), halfUnionCase(), mixedMathCase())
	cs = append(cs, mmaFragCase(), mmaBFloatCase())
	return cs
}

// h16 and b16 round a float64 to half and bfloat bits.
func h16(x float64) uint32 { return uint32(f16.FromFloat64(x)) }
func b16(x float64) uint32 { return uint32(f16.BFloatFromFloat64(x)) }

// i32 and i64 are the two's complement bits of a signed value.
func i32(v int32) uint32 { return uint32(v) }
func i64(v int64) uint64 { return uint64(v) }

// lo32 is the low word of v (a conversion that truncates, as the kernel's
// uint(x) does).
func lo32(v uint64) uint32 { return uint32(v) }

// f32bits is the bit pattern of x as a float.
func f32bits(x float64) uint32 { return math.Float32bits(float32(x)) }

// limitsTableCase checks metal::numeric_limits of every scalar type, the
// limit macros and MLX's Limits<T> built from them, against the values
// the formats define.
func limitsTableCase() tcase {
	inf := math.Inf(1)
	halfMax := (2 - math.Ldexp(1, -10)) * math.Ldexp(1, 15)
	bfMax := (2 - math.Ldexp(1, -7)) * math.Ldexp(1, 127)
	want := []uint32{
		f32bits(math.Ldexp(1, -126)), f32bits(math.MaxFloat32), f32bits(-math.MaxFloat32), f32bits(math.Ldexp(1, -23)),
		f32bits(inf), 0x7fc00000, f32bits(math.SmallestNonzeroFloat32), f32bits(0.5),
		h16(math.Ldexp(1, -14)), h16(halfMax), h16(-halfMax), h16(math.Ldexp(1, -10)),
		h16(inf), h16(math.NaN()), h16(math.Ldexp(1, -24)), h16(0.5),
		b16(math.Ldexp(1, -126)), b16(bfMax), b16(-bfMax), b16(math.Ldexp(1, -7)),
		b16(inf), b16(math.NaN()), b16(math.Ldexp(1, -133)), b16(0.5),
		i32(math.MinInt8), math.MaxUint8, i32(math.MinInt16), math.MaxUint16,
		i32(math.MinInt32), math.MaxInt32, math.MaxUint32,
		lo32(i64(math.MinInt64) >> 32), lo32(math.MaxUint64 >> 1),
		24, 16, i32(-13), 128, 31,
		// is_signed(half) | is_integer(short)<<3 | has_quiet_NaN(half)<<4 |
		// is_iec559(half)<<6 | is_specialized(bool)<<7; the rest are false.
		1 | 1<<3 | 1<<4 | 1<<6 | 1<<7,
		h16(math.Inf(-1)), b16(-bfMax),
		f32bits(inf) ^ f32bits(inf) ^ f32bits(math.MaxFloat32),
		h16(inf) ^ h16(halfMax)<<16,
		uint32(1<<31) ^ math.MaxUint32 ^ math.MaxInt16 ^ 8,
	}
	return tcase{name: "numeric_limits", file: "limits.metal", entry: "limits_table", tgs: dim(1), threads: dim(1),
		bufs: []backend.Buffer{out(0, make([]byte, 4*len(want)))},
		want: map[int][]byte{0: u32bytes(want)}, elem: 4}
}

// softmaxCase runs the masked softmax of limits.metal on 8 rows of 32
// integers in [-20, 0], in float or half: row 0 unmasked, row 3 fully
// masked (zeros), the rest masked at random.
func softmaxCase(half bool) tcase {
	const rows, n = 8, 32
	r := rng(31)
	x := make([]float64, rows*n)
	for i := range x {
		x[i] = -float64(r.next() % 21)
	}
	mask := make([]uint32, rows)
	for i := range mask {
		mask[i] = r.next() & r.next()
	}
	mask[0], mask[3] = 0, math.MaxUint32
	round := func(v float64) float64 { return float64(float32(v)) }
	if half {
		round = func(v float64) float64 { return f16.ToFloat64(f16.FromFloat64(v)) }
	}
	y := make([]float64, len(x))
	for row := 0; row < rows; row++ {
		m := math.Inf(-1)
		for l := 0; l < n; l++ {
			if mask[row]>>l&1 == 0 {
				m = math.Max(m, x[row*n+l])
			}
		}
		e := make([]float64, n)
		s := 0.0
		for l := 0; l < n; l++ {
			if mask[row]>>l&1 == 0 && !math.IsInf(m, -1) {
				e[l] = math.Ldexp(1, int(x[row*n+l]-m)) // exp2 of an integer: exact
			}
			s = round(s + e[l]) // simd_sum folds lane 0 first, rounding each step
		}
		for l := 0; l < n; l++ {
			if s != 0 {
				y[row*n+l] = round(e[l] / s)
			}
		}
	}
	name, entry, elem := "softmax_limits_f32", "softmax_f32", 4
	enc := func(v []float64) []byte {
		f := make([]float32, len(v))
		for i := range v {
			f[i] = float32(v[i])
		}
		return f32bytes(f)
	}
	if half {
		name, entry, elem = "softmax_limits_f16", "softmax_f16", 2
		enc = func(v []float64) []byte {
			h := make([]uint16, len(v))
			for i := range v {
				h[i] = f16.FromFloat64(v[i])
			}
			return u16bytes(h)
		}
	}
	return tcase{name: name, file: "limits.metal", entry: entry, tgs: dim(2), threads: dim(rows * n / 2),
		bufs: []backend.Buffer{in(0, enc(x)), in(1, u32bytes(mask)), out(2, make([]byte, elem*len(x)))},
		want: map[int][]byte{2: enc(y)}, elem: elem}
}

// traitsCase runs traits.metal's helpers, which pick their accumulation
// type, overload and unsigned twin through metal:: type traits.
func traitsCase() tcase {
	const n, k = 64, 8
	r := rng(32)
	xh := make([]uint16, n*k)
	xs := make([]uint16, n*k)
	xu := make([]byte, n*k)
	xi := make([]uint32, 4*n)
	for i := range xh {
		xh[i] = f16.FromFloat64(float64(r.float()) * 100)
		xs[i] = uint16(r.next())
		xu[i] = byte(r.next())
	}
	for i := range xi {
		xi[i] = r.next()
	}
	want := make([]uint32, 8*n)
	for i := 0; i < n; i++ {
		var sh float32
		var ss int32
		var su uint32
		for j := 0; j < k; j++ {
			sh += float32(f16.ToFloat64(xh[i*k+j]))
			ss += int32(int16(xs[i*k+j]))
			su += uint32(xu[i*k+j])
		}
		o := want[8*i:]
		o[0], o[1], o[2] = math.Float32bits(sh), uint32(ss), su
		wi := float32(int16(xs[i*k])) + 0.5
		o[3] = math.Float32bits(float32(f16.ToFloat64(xh[i*k])) + wi)
		o[4], o[5] = xi[4*i]^1<<31, xi[4*i+3]^1<<31
		o[6] = 1 | 0<<1 | 4<<2 // can_convert_to_float<half>, <float>, vec_elements<int4>
		o[7] = 1
	}
	return tcase{name: "type_traits", file: "traits.metal", entry: "traits", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, u16bytes(xh)), in(1, u16bytes(xs)), in(2, xu), in(3, u32bytes(xi)), out(4, make([]byte, 32*n))},
		want: map[int][]byte{4: u32bytes(want)}, elem: 4}
}

// halfUnionCase dequantises ggml q4_0 blocks (a half scale and packed
// 4-bit quants, a global constant half table) and reads halves and
// bfloats back through unions.
func halfUnionCase() tcase {
	const n = 64
	r := rng(33)
	kv := []float64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	blocks := make([]byte, 18*n)
	y := make([]float32, 64*n)
	bits := make([]uint32, 5*n)
	for i := 0; i < n; i++ {
		b := blocks[18*i : 18*i+18]
		var d uint16
		for d = uint16(r.next()); d&0x7c00 == 0x7c00; d = uint16(r.next()) {
		}
		b[0], b[1] = byte(d), byte(d>>8)
		for j := 2; j < 18; j++ {
			b[j] = byte(r.next())
		}
		df := float32(f16.ToFloat64(d))
		qs := b[2:]
		yi := y[64*i:]
		for j := 0; j < 16; j++ {
			lo, hi := qs[j]&0x0f, qs[j]>>4
			yi[j] = float32(int(lo)-8) * df
			yi[j+16] = float32(int(hi)-8) * df
			yi[j+32] = df * float32(kv[lo])
			yi[j+48] = df * float32(kv[hi])
		}
		o := bits[5*i:]
		o[0] = uint32(f16.FromFloat64(float64(df) * 0.5))
		c := (uint16(qs[0]) | uint16(qs[1])<<8) & 0x7bff
		o[1] = math.Float32bits(float32(f16.ToFloat64(c)))
		o[2] = uint32(f16.BFloatFromFloat64(float64(df * 3)))
		o[3] = uint32(f16.FromFloat64(float64(df))) | uint32(f16.FromFloat64(-2*float64(df)))<<16
		o[4] = 8 | 2<<8 | 4<<16 // sizeof(scaled), sizeof(f16_bits), alignof(scaled)
	}
	return tcase{name: "half_unions_q4_0", file: "half_union.metal", entry: "dequant_q4_0", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, blocks), out(1, make([]byte, 4*len(y))), out(2, make([]byte, 4*len(bits)))},
		want: map[int][]byte{1: f32bytes(y), 2: u32bytes(bits)}, elem: 4}
}

// mfmin and mfmax are Metal's fmin and fmax: a NaN argument loses and -0
// is below +0.
func mfmin(x, y float32) float32 {
	switch {
	case x != x:
		return y
	case y != y:
		return x
	case x == y:
		if math.Signbit(float64(x)) {
			return x
		}
		return y
	case x < y:
		return x
	}
	return y
}

func mfmax(x, y float32) float32 {
	switch {
	case x != x:
		return y
	case y != y:
		return x
	case x == y:
		if math.Signbit(float64(x)) {
			return y
		}
		return x
	case x > y:
		return x
	}
	return y
}

func mclamp(x, lo, hi float32) float32 { return mfmin(mfmax(x, lo), hi) }

// milogb is the prelude's ilogb: INT_MIN for zero and NaN, INT_MAX for
// infinities.
func milogb(x float32) int32 {
	switch {
	case x == 0 || x != x:
		return math.MinInt32
	case math.IsInf(float64(x), 0):
		return math.MaxInt32
	}
	return int32(math.Ilogb(float64(x)))
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// halfR rounds a float32 to half and back.
func halfR(x float32) float32 { return float32(f16.ToFloat64(f16.FromFloat64(float64(x)))) }

// mixedMathCase checks vector-with-scalar math in float, half and int.
func mixedMathCase() tcase {
	const n = 64
	r := rng(34)
	v, w, z := make([]float32, 4*n), make([]float32, 4*n), make([]float32, 4*n)
	k := make([]uint32, 4*n)
	for i := range v {
		v[i] = r.float() * 3
		w[i] = r.float() * 3
		z[i] = r.float()
		if r.next()%4 == 0 {
			z[i] = float32(math.NaN())
		}
		k[i] = r.next()
		if i%3 == 0 {
			k[i] >>= 24 // small values, some inside the clamp
		}
	}
	v[0], v[1], w[0] = float32(math.Copysign(0, -1)), 0, 0
	res := make([]float32, 48*n)
	hout := make([]uint16, 12*n)
	iout := make([]uint32, 12*n)
	for i := 0; i < n; i++ {
		x, y, q := v[4*i:4*i+4], w[4*i:4*i+4], z[4*i:4*i+4]
		o := res[48*i:]
		for c := 0; c < 4; c++ {
			o[c] = mfmax(q[c], 0)
			o[4+c] = mfmin(0.5, q[c])
			o[8+c] = mclamp(x[c], -1, 1)
			o[12+c] = mclamp(0.25, x[c], y[c])
			o[16+c] = b2f(!(x[c] < 0))
			d := float32(y[c] - x[c])
			o[20+c] = x[c] + float32(d*0.25)
			t := mclamp(float32(x[c]+1)/2, 0, 1)
			o[24+c] = float32(t*t) * float32(3-float32(2*t))
			o[28+c] = mfmax(x[c], y[0]) + mfmin(y[1], x[c])
			o[32+c] = x[c]
			if q[c] != q[c] {
				o[32+c] = y[c]
			}
			o[36+c] = b2f(q[c] == q[c]) + float32(float32(milogb(y[c]))*2)
			a, b := mfmax(mfmax(x[c], 0), y[c]), mfmax(mfmin(-0.5, x[c]), mfmin(mfmax(-0.5, x[c]), y[c]))
			o[40+c] = a + b
		}
		relu := float32(0)
		if x[0] > 0 {
			relu = x[0]
		}
		o[44], o[45], o[46], o[47] = relu, mfmax(x[1], 0), mfmax(x[2], y[2]), mfmin(y[3], x[3])
		ho := hout[12*i:]
		io := iout[12*i:]
		for c := 0; c < 4; c++ {
			h, hy := halfR(x[c]), halfR(y[c])
			ho[c] = f16.FromFloat64(float64(mfmax(h, 0)))
			ho[4+c] = f16.FromFloat64(float64(mclamp(h, -0.5, 0.5)))
			d := float32(hy - h)
			ho[8+c] = f16.FromFloat64(float64(h + float32(d*0.5)))
			kc := int32(k[4*i+c])
			io[c] = uint32(max(kc, 0))
			io[4+c] = uint32(min(max(kc, -100), 100))
			io[8+c] = uint32(min(7, kc) + max(kc, 0, -kc))
		}
	}
	return tcase{name: "vector_scalar_math", file: "mixed_math.metal", entry: "mixed_math", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, f32bytes(v)), in(1, f32bytes(w)), in(2, f32bytes(z)), in(3, u32bytes(k)),
			out(4, make([]byte, 4*len(res))), out(5, make([]byte, 2*len(hout))), out(6, make([]byte, 4*len(iout)))},
		want: map[int][]byte{4: f32bytes(res), 5: u16bytes(hout), 6: u32bytes(iout)}, elem: 2}
}

// laneCoord is the row and first column of lane l's two elements of an 8x8
// simdgroup matrix on Apple GPUs: bits 4, 2 and 1 of l give the row, bits
// 3 and 0 the column pair.
func laneCoord(l int) (row, col int) {
	return (l>>4&1)*4 + (l>>2&1)*2 + l>>1&1, (l>>3&1)*4 + (l&1)*2
}

// mmaFragCase runs MLX's fragment pattern (thread_elements() at get_coord)
// on small integers, so every product is exact and a lane layout that
// differs from Apple's shows as wrong elements.
func mmaFragCase() tcase {
	r := rng(35)
	a, b := make([]uint16, 64), make([]uint16, 64)
	af, bf, c := make([]float32, 64), make([]float32, 64), make([]float32, 64)
	for i := range a {
		af[i], bf[i] = float32(int(r.next()%9)-4), float32(int(r.next()%9)-4)
		a[i], b[i] = f16.FromFloat64(float64(af[i])), f16.FromFloat64(float64(bf[i]))
		c[i] = float32(int(r.next()%33) - 16)
	}
	big := make([]float32, 120+64)
	for i := range big {
		big[i] = float32(i % 120)
	}
	d1, d2, tr, lanes := make([]float32, 64), make([]float32, 120), make([]float32, 64), make([]float32, 64)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			var s float32
			for k := 0; k < 8; k++ {
				s += af[8*i+k] * bf[8*k+j]
			}
			d1[8*i+j] = c[8*i+j] + s
			d2[(2+j)*12+1+i] = 0.5 + s
			tr[8*i+j] = big[(1+j)*12+3+i]
		}
	}
	for l := 0; l < 32; l++ {
		row, col := laneCoord(l)
		lanes[2*l], lanes[2*l+1] = float32(row*8+col), float32(row*8+col+1)
	}
	return tcase{name: "simdgroup_matrix_fragments", file: "matrix.metal", entry: "mma_frag", tgs: dim(1), threads: dim(32),
		bufs: []backend.Buffer{in(0, u16bytes(a)), in(1, u16bytes(b)), in(2, f32bytes(c)), in(3, f32bytes(big)),
			out(4, make([]byte, 256)), out(5, make([]byte, 480)), out(6, make([]byte, 256)), out(7, make([]byte, 256))},
		want: map[int][]byte{4: f32bytes(d1), 5: f32bytes(d2), 6: f32bytes(tr), 7: f32bytes(lanes)}, elem: 4}
}

// mmaBFloatCase is D = A*B + C in bfloat: each step is a float fused
// multiply-add rounded to bfloat.
func mmaBFloatCase() tcase {
	r := rng(36)
	mat := func() ([]uint16, []float64) {
		bits, vals := make([]uint16, 64), make([]float64, 64)
		for i := range bits {
			x := float64(r.float() * 4)
			if math.Abs(x) < 1.0/16 {
				x = 1.0 / 16 // keep every value a multiple of 2^-11, so the sums below are exact
			}
			bits[i] = f16.BFloatFromFloat64(x)
			vals[i] = f16.BFloatToFloat64(bits[i])
		}
		return bits, vals
	}
	ab, av := mat()
	bb, bv := mat()
	cb, cv := mat()
	d := make([]uint16, 64)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			acc := cv[8*i+j]
			for k := 0; k < 8; k++ {
				// Every value is a multiple of 2^-22 below 2^8, so the sum is
				// exact in float64: this is fmaf's result, then the step's
				// rounding to bfloat.
				f := float32(math.FMA(av[8*i+k], bv[8*k+j], acc))
				acc = f16.BFloatToFloat64(f16.BFloatFromFloat64(float64(f)))
			}
			d[8*i+j] = f16.BFloatFromFloat64(acc)
		}
	}
	return tcase{name: "simdgroup_matrix_bfloat", file: "matrix.metal", entry: "mma_bf16", tgs: dim(1), threads: dim(32),
		bufs: []backend.Buffer{in(0, u16bytes(ab)), in(1, u16bytes(bb)), in(2, u16bytes(cb)), out(3, make([]byte, 128))},
		want: map[int][]byte{3: u16bytes(d)}, elem: 2}
}
