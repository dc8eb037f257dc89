package conformance

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"

	"metalab/backend"
	"metalab/internal/f16"
)

// stdlibCases are the conformance cases of the metal_stdlib rows of the
// prelude's README table: kernels written the way ggml and MLX write them
// (type traits in templates, numeric_limits in a softmax, unions with
// half, vector-with-scalar math, simdgroup matrices filled through
// thread_elements()), each checked against a Go computation.
func stdlibCases() []tcase {
	return []tcase{
		limitsTableCase(),  // numeric limits and constants, scalar types
		softmaxCase(false), // numeric limits, SIMD-group functions, math
		softmaxCase(true),  // the same in half
		traitsCase(),       // type traits, packed vectors, attributes
		halfUnionCase(),    // 16-bit floats in unions, global type names
		mixedMathCase(),    // common and math functions, vector with scalar
		relationalCase(),   // relational functions
		integerExtCase(),   // integer functions: saturating, high half, 24-bit
		integerBitsCase(),  // integer functions: bits
		geometricCase(),    // geometric functions
		matrixFnCase(),     // matrix types and functions
		mmaFragCase(),      // simdgroup matrices: Apple's lane layout, mixed precision
		mmaBFloatCase(),    // simdgroup matrices of bfloat
		containersCase(),   // array, array_ref, uniform
		simdExtCase(),      // SIMD- and quad-group functions on vectors and 64-bit values
		packCase(),         // pack and unpack
		bfloatMathCase(),   // bfloat math, packed_bfloat, pow of half
		inlineAttrsCase(),  // attributes and pragmas, predefined macros
	}
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

// u64bytes encodes 64-bit words little-endian.
func u64bytes(v []uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

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

// det2 and det3 are the prelude's determinant order: det2 = m00*m11 -
// m01*m10, det3 expands along column 0 (arguments are row-major: mRC).
// Each product is converted explicitly so Go cannot fuse it.
func det2(m00, m01, m10, m11 float32) float32 { return float32(m00*m11) - float32(m01*m10) }

func det3(m00, m01, m02, m10, m11, m12, m20, m21, m22 float32) float32 {
	a := float32(m00 * det2(m11, m12, m21, m22))
	b := float32(m10 * det2(m01, m02, m21, m22))
	c := float32(m20 * det2(m01, m02, m11, m12))
	return float32(a-b) + c
}

// matrixFnCase checks determinant, transpose, compound assignment and a
// bfloat to float matrix cast.
func matrixFnCase() tcase {
	const n = 64
	r := rng(37)
	m := make([]float32, 16*n) // n float4x4, column-major: m[16i + 4c + r]
	bm := make([]uint16, 16*n)
	for i := range m {
		m[i] = r.float() * 4
		bm[i] = f16.BFloatFromFloat64(float64(r.float() * 100))
	}
	res := make([]float32, 24*n)
	hres := make([]uint16, n)
	for i := 0; i < n; i++ {
		e := func(row, col int) float32 { return m[16*i+4*col+row] }
		o := res[24*i:]
		o[0] = det2(e(0, 0), e(0, 1), e(1, 0), e(1, 1))
		o[1] = det3(e(0, 0), e(0, 1), e(0, 2), e(1, 0), e(1, 1), e(1, 2), e(2, 0), e(2, 1), e(2, 2))
		minor := func(skip int) float32 {
			var rows []int
			for k := 0; k < 4; k++ {
				if k != skip {
					rows = append(rows, k)
				}
			}
			a, b, c := rows[0], rows[1], rows[2]
			return det3(e(a, 1), e(a, 2), e(a, 3), e(b, 1), e(b, 2), e(b, 3), e(c, 1), e(c, 2), e(c, 3))
		}
		d4 := float32(e(0, 0)*minor(0)) - float32(e(1, 0)*minor(1))
		d4 = float32(d4+float32(e(2, 0)*minor(2))) - float32(e(3, 0)*minor(3))
		o[2] = d4
		h := func(row, col int) float32 { return halfR(e(row, col)) }
		hres[i] = f16.FromFloat64(float64(det3(h(0, 0), h(0, 1), h(0, 2), h(1, 0), h(1, 1), h(1, 2), h(2, 0), h(2, 1), h(2, 2))))
		// t = transpose(a)*2 + a - identity; t[c][r] is row r, column c.
		o[3] = float32(e(1, 2)*2) + e(2, 1)
		o[4] = float32(e(3, 0)*2) + e(0, 3)
		// (a3*a3)[2][1]: column 2 is a3 times a3's column 2, summed over
		// a3's columns in order.
		p := float32(e(1, 0) * e(0, 2))
		p = float32(p+float32(e(1, 1)*e(1, 2))) + float32(e(1, 2)*e(2, 2))
		o[5] = p
		o[6] = -e(0, 1)
		o[7] = 1
		for k := 0; k < 16; k++ {
			o[8+k] = float32(f16.BFloatToFloat64(bm[16*i+k]))
		}
	}
	return tcase{name: "matrix_functions", file: "matrix_fn.metal", entry: "matrix_fn", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, f32bytes(m)), in(1, u16bytes(bm)), out(2, make([]byte, 4*len(res))), out(3, make([]byte, 2*n))},
		want: map[int][]byte{2: f32bytes(res), 3: u16bytes(hres)}, elem: 4}
}

// containersCase runs a 5-tap filter through metal::array and array_ref,
// with a uniform<uint> length.
func containersCase() tcase {
	const n = 96
	r := rng(38)
	x := make([]float32, n)
	for i := range x {
		x[i] = r.float()
	}
	weights := []float32{0.5, -1.5, 2.25, 3}
	shape := []uint32{7, 3}
	params := append(f32bytes(weights), u32bytes(shape)...)
	taps := []float32{0.0625, 0.25, 0.375, 0.25, 0.0625}
	y := make([]float32, 6*n)
	for i := 0; i < n; i++ {
		var win [5]float32
		for k := range win {
			win[k] = x[(i+k)%n]
		}
		o := y[6*i:]
		var s float32
		for k := 0; k < 5; k++ {
			s += float32(win[k] * taps[k])
		}
		o[0] = s
		s = 0
		for k := 0; k < 3; k++ {
			s += float32(win[1+k] * (taps[k] * 2))
		}
		o[1] = s
		o[2] = float32(weights[i%4]*float32(shape[1])) + float32(shape[0])
		o[3] = 10 + 0 + taps[4]
		o[4] = (taps[4] + taps[1]) + taps[2]
		o[5] = float32(n) + 0.5
	}
	return tcase{name: "array_array_ref_uniform", file: "containers.metal", entry: "containers", tgs: dim(3), threads: dim(n / 3),
		bufs: []backend.Buffer{in(0, params), in(1, f32bytes(x)), out(2, make([]byte, 4*len(y)))},
		want: map[int][]byte{2: f32bytes(y)}, elem: 4}
}

// simdExtCase checks broadcasts and shuffles of vectors and of 64-bit
// values, including MLX's overloads that go through uint2.
func simdExtCase() tcase {
	const n = 128
	r := rng(39)
	v := make([]float32, 4*n)
	u := make([]uint64, n)
	for i := range v {
		v[i] = r.float() * 10
	}
	for i := range u {
		u[i] = uint64(r.next())<<32 | uint64(r.next())
	}
	o4 := make([]float32, 12*n)
	oh := make([]uint16, 4*n)
	oi := make([]uint32, 4*n)
	ou := make([]uint64, 3*n)
	os := make([]uint64, 2*n)
	ob := make([]uint32, n)
	hr := func(x float32) uint16 { return f16.FromFloat64(float64(x)) }
	for base := 0; base < n; base += 32 {
		for lane := 0; lane < 32; lane++ {
			i := base + lane
			at := func(l int) []float32 { return v[4*(base+l) : 4*(base+l)+4] }
			copy(o4[12*i:], at(5))
			copy(o4[12*i+4:], at(lane&^3+2))
			copy(o4[12*i+8:], at(lane^3))
			oh[4*i], oh[4*i+1] = hr(at(31)[0]), hr(at(31)[1])
			src := at((lane + 7) % 32)
			oh[4*i+2], oh[4*i+3] = hr(src[0]), hr(src[1])
			for c := 0; c < 3; c++ {
				oi[4*i+c] = uint32(int32(float32(at(7)[c] * 100)))
			}
			oi[4*i+3] = uint32(int32(float32(at(0)[2] * 100)))
			down := func(d int) int {
				if lane+d < 32 {
					return base + lane + d
				}
				return i
			}
			up := i
			if lane >= 2 {
				up = i - 2
			}
			ou[3*i], ou[3*i+1], ou[3*i+2] = u[base+31-lane], u[down(3)], u[base]
			os[2*i], os[2*i+1] = u[up], u[down(4)]
			ob[i] = uint32(u[down(1)] & 1)
		}
	}
	return tcase{name: "simd_vectors_and_64bit", file: "simd_ext.metal", entry: "simd_ext", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, f32bytes(v)), in(1, u64bytes(u)), out(2, make([]byte, 4*len(o4))), out(3, make([]byte, 2*len(oh))),
			out(4, make([]byte, 4*len(oi))), out(5, make([]byte, 8*len(ou))), out(6, make([]byte, 8*len(os))), out(7, make([]byte, 4*n))},
		want: map[int][]byte{2: f32bytes(o4), 3: u16bytes(oh), 4: u32bytes(oi), 5: u64bytes(ou), 6: u64bytes(os), 7: u32bytes(ob)}, elem: 4}
}

// packCase checks Metal's normalised-integer pack and unpack functions
// against their definitions (component 0 in the lowest bits).
func packCase() tcase {
	const n = 64
	r := rng(40)
	w := make([]uint32, n)
	f := make([]float32, 4*n)
	for i := range w {
		w[i] = r.next()
	}
	for i := range f {
		f[i] = r.float() * 1.5
		if r.next()%16 == 0 {
			f[i] = float32(math.NaN())
		}
	}
	f[0], f[1], f[2], f[3] = 0, 1, -1, 0.5/255 // a tie: rounds to even (0)
	unorm := func(c uint32, bits uint) float32 { return float32(c) / float32(uint32(1)<<bits-1) }
	snorm := func(c uint32, bits uint) float32 {
		v := int32(c<<(32-bits)) >> (32 - bits)
		return mfmax(float32(v)/float32(uint32(1)<<(bits-1)-1), -1)
	}
	toUnorm := func(x float32, bits uint) uint32 {
		return uint32(math.RoundToEven(float64(float32(mclamp(x, 0, 1) * float32(uint32(1)<<bits-1)))))
	}
	toSnorm := func(x float32, bits uint) uint32 {
		v := int32(math.RoundToEven(float64(float32(mclamp(x, -1, 1) * float32(uint32(1)<<(bits-1)-1)))))
		return uint32(v) & (uint32(1)<<bits - 1)
	}
	uf := make([]float32, 28*n)
	uh := make([]uint16, 12*n)
	pk := make([]uint32, 11*n)
	hb := func(x float32) uint16 { return f16.FromFloat64(float64(x)) }
	for i := 0; i < n; i++ {
		x := w[i]
		o := uf[28*i:]
		h := uh[12*i:]
		for c := uint(0); c < 4; c++ {
			b := x >> (8 * c) & 0xff
			o[c], o[4+c] = unorm(b, 8), snorm(b, 8)
			h[c], h[4+c] = hb(unorm(b, 8)), hb(snorm(b, 8))
			s1 := x & 0xff0a0a0a >> (8 * c) & 0xff
			o[20+c] = unorm(s1, 8)
			s2 := x & 0x0a0a0a0a >> (8 * c) & 0xff
			o[24+c] = float32(f16.ToFloat64(hb(unorm(s2, 8) / 12.92)))
			if c < 3 {
				o[20+c] /= 12.92
			}
		}
		o[24+3] = float32(f16.ToFloat64(hb(unorm(x&0x0a0a0a0a>>24, 8))))
		for c := uint(0); c < 2; c++ {
			b := x >> (16 * c) & 0xffff
			o[8+c], o[10+c] = unorm(b, 16), snorm(b, 16)
			h[8+c], h[10+c] = hb(unorm(b, 16)), hb(snorm(b, 16))
		}
		o[12], o[13], o[14], o[15] = unorm(x&0x3ff, 10), unorm(x>>10&0x3ff, 10), unorm(x>>20&0x3ff, 10), unorm(x>>30, 2)
		o[16], o[17], o[18], o[19] = unorm(x&0x1f, 5), unorm(x>>5&0x3f, 6), unorm(x>>11&0x1f, 5), 0
		v := f[4*i : 4*i+4]
		hv := []float32{halfR(v[0]), halfR(v[1]), halfR(v[2]), halfR(v[3])}
		p := pk[11*i:]
		p4 := func(v []float32, to func(float32, uint) uint32) uint32 {
			return to(v[0], 8) | to(v[1], 8)<<8 | to(v[2], 8)<<16 | to(v[3], 8)<<24
		}
		p[0], p[1], p[2], p[3] = p4(v, toUnorm), p4(v, toSnorm), p4(hv, toUnorm), p4(hv, toSnorm)
		p[4] = toUnorm(v[0], 16) | toUnorm(v[1], 16)<<16
		p[5] = toSnorm(v[2], 16) | toSnorm(v[3], 16)<<16
		p[6] = toSnorm(hv[0], 16) | toSnorm(hv[1], 16)<<16
		p10a2 := func(v []float32) uint32 {
			return toUnorm(v[0], 10) | toUnorm(v[1], 10)<<10 | toUnorm(v[2], 10)<<20 | toUnorm(v[3], 2)<<30
		}
		p[7] = p10a2(v)
		p[8] = toUnorm(v[0], 5) | toUnorm(v[1], 6)<<5 | toUnorm(v[2], 5)<<11
		var srgb []float32
		for c := 0; c < 3; c++ {
			srgb = append(srgb, float32(mclamp(float32(v[c]*0.002), 0, 1)*12.92))
		}
		p[9] = p4(append(srgb, v[3]), toUnorm)
		p[10] = p10a2(hv)
	}
	return tcase{name: "pack_unpack", file: "pack.metal", entry: "pack", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, u32bytes(w)), in(1, f32bytes(f)), out(2, make([]byte, 4*len(uf))), out(3, make([]byte, 2*len(uh))),
			out(4, make([]byte, 4*len(pk)))},
		want: map[int][]byte{2: f32bytes(uf), 3: u16bytes(uh), 4: u32bytes(pk)}, elem: 4}
}

// sat clamps v to [lo, hi].
func sat(v, lo, hi *big.Int) *big.Int {
	if v.Cmp(lo) < 0 {
		return lo
	}
	if v.Cmp(hi) > 0 {
		return hi
	}
	return v
}

// integerExtCase checks absdiff, addsat, subsat, madhi, madsat, mul24 and
// mad24 against exact big-integer arithmetic.
func integerExtCase() tcase {
	const n = 96
	r := rng(41)
	a, b, c := make([]uint32, n), make([]uint32, n), make([]uint32, n)
	for i := range a {
		a[i], b[i], c[i] = r.next(), r.next(), r.next()
		if i%4 == 1 { // small values: no saturation
			a[i], b[i], c[i] = a[i]>>20, b[i]>>21, c[i]>>16
		}
	}
	bi := func(v int64) *big.Int { return big.NewInt(v) }
	bu := func(v uint64) *big.Int { return new(big.Int).SetUint64(v) }
	i32lo, i32hi := bi(math.MinInt32), bi(math.MaxInt32)
	satI32 := func(v *big.Int) uint32 { return uint32(int32(sat(v, i32lo, i32hi).Int64())) }
	satU32 := func(v *big.Int) uint32 { return uint32(sat(v, bi(0), bi(math.MaxUint32)).Uint64()) }
	mul := func(x, y *big.Int) *big.Int { return new(big.Int).Mul(x, y) }
	add := func(x, y *big.Int) *big.Int { return new(big.Int).Add(x, y) }
	sub := func(x, y *big.Int) *big.Int { return new(big.Int).Sub(x, y) }
	hi := func(p *big.Int, bits uint) *big.Int { return new(big.Int).Rsh(p, bits) } // floor: the high half in two's complement
	absdiff := func(x, y int32) uint32 {
		if x > y {
			return uint32(x) - uint32(y)
		}
		return uint32(y) - uint32(x)
	}
	res := make([]uint32, 16*n)
	lres := make([]uint64, 4*n)
	for i := 0; i < n; i++ {
		x, y, z := int32(a[i]), int32(b[i]), int32(c[i])
		ux, uy, uz := a[i], b[i], c[i]
		o := res[16*i:]
		o[0] = absdiff(x, y)
		o[1] = satI32(add(bi(int64(x)), bi(int64(y))))
		o[2] = satI32(sub(bi(int64(x)), bi(int64(y))))
		o[3] = satU32(add(bu(uint64(ux)), bu(uint64(uy))))
		o[4] = satU32(sub(bu(uint64(ux)), bu(uint64(uy))))
		o[5] = uint32(int32(hi(mul(bi(int64(x)), bi(int64(y))), 32).Int64()) + z)
		o[6] = uint32(hi(mul(bu(uint64(ux)), bu(uint64(uy))), 32).Uint64()) + uz
		o[7] = satI32(add(mul(bi(int64(x)), bi(int64(y))), bi(int64(z))))
		o[8] = satU32(add(mul(bu(uint64(ux)), bu(uint64(uy))), bu(uint64(uz))))
		o[9] = uint32((x>>8)*(y>>8)) ^ ((ux>>8)*(uy>>8) + uz)
		sx, sy := int16(x), int16(y)
		cx, cy := uint8(x), uint8(y)
		s16 := int16(sat(bi(int64(sx)+int64(sy)), bi(math.MinInt16), bi(math.MaxInt16)).Int64())
		c8 := uint8(0)
		if cx > cy {
			c8 = cx - cy
		}
		d8 := c8
		if cy > cx {
			d8 = cy - cx
		}
		o[10] = uint32(uint16(s16)) | uint32(c8)<<16 | uint32(d8)<<24
		o[11] = uint32(int32(sat(bi(int64(sx)*int64(sy)+int64(int16(z))), bi(math.MinInt16), bi(math.MaxInt16)).Int64()))
		v := [4]int32{x, y, z, x ^ y}
		w := [4]int32{y, z, x, x & y}
		var s [4]int32
		for k := range v {
			s[k] = int32(satI32(add(bi(int64(v[k])), bi(int64(w[k]))))) ^ int32(satI32(sub(bi(int64(v[k])), bi(int64(w[k]))))) ^
				int32(satI32(add(mul(bi(int64(v[k])), bi(int64(w[k]))), bi(int64(v[k])))))
		}
		o[12] = absdiff(v[0], w[0]) ^ absdiff(v[3], w[3])
		o[13] = uint32(s[1] ^ s[2])
		us := func(p, q uint32) uint32 { return min(uint32(uint16(p))+uint32(uint16(q)), math.MaxUint16) }
		o[14] = us(ux, uy) | us(uy, uz)<<16
		o[15] = uint32((x>>8)*(y>>8) + z)
		lx, ly := int64(x)<<32|int64(uy), int64(y)<<31^int64(uz)
		i64lo, i64hi := bi(math.MinInt64), bi(math.MaxInt64)
		l := lres[4*i:]
		l[0] = uint64(sat(add(bi(lx), bi(ly)), i64lo, i64hi).Int64())
		l[1] = uint64(sat(sub(bi(lx), bi(ly)), i64lo, i64hi).Int64())
		l[2] = uint64(hi(mul(bi(lx), bi(ly)), 64).Int64() + int64(z))
		l[3] = uint64(sat(add(mul(bi(lx), bi(ly)), bi(int64(z))), i64lo, i64hi).Int64())
	}
	return tcase{name: "integer_saturating_and_high", file: "integer_ext.metal", entry: "integer_ext", tgs: dim(3), threads: dim(n / 3),
		bufs: []backend.Buffer{in(0, u32bytes(a)), in(1, u32bytes(b)), in(2, u32bytes(c)), out(3, make([]byte, 4*len(res))), out(4, make([]byte, 8*len(lres)))},
		want: map[int][]byte{3: u32bytes(res), 4: u64bytes(lres)}, elem: 4}
}

// bfloatMathCase checks bfloat math (each result computed in float and
// rounded once to bfloat, each operator likewise), packed_bfloat4
// arithmetic and pow of half on exact powers.
func bfloatMathCase() tcase {
	const n = 64
	r := rng(42)
	xb := make([]uint16, 4*n)
	for i := range xb {
		x := float64(r.float() * 8)
		if math.Abs(x) < 1.0/16 {
			x = -1.0 / 16
		}
		xb[i] = f16.BFloatFromFloat64(x)
	}
	hb := make([]uint16, n)
	for i := range hb {
		hb[i] = f16.FromFloat64(float64(int(r.next()%81)-40) / 4)
	}
	bv := func(b uint16) float32 { return float32(f16.BFloatToFloat64(b)) }
	bf := func(x float32) float32 { return bv(f16.BFloatFromFloat64(float64(x))) }
	bits := func(x float32) uint16 { return f16.BFloatFromFloat64(float64(x)) }
	res := make([]uint16, 20*n)
	hres := make([]uint16, 3*n)
	for i := 0; i < n; i++ {
		v := []float32{bv(xb[4*i]), bv(xb[4*i+1]), bv(xb[4*i+2]), bv(xb[4*i+3])}
		b, y, z, w := v[0], v[1], v[2], v[3]
		fl := func(x float32) float32 { return float32(math.Floor(float64(x))) }
		o := []float32{
			bf(float32(math.Sqrt(math.Abs(float64(b))))),
			bf(fl(b) + float32(math.Ceil(float64(y)))),
			bf(float32(math.Trunc(float64(z))) - float32(math.RoundToEven(float64(w)))),
			bf(float32(math.FMA(float64(b), float64(y), float64(z)))),
			mfmax(b, y),
			mfmin(z, 0),
			float32(math.Copysign(float64(w), float64(b))),
			mclamp(b, -1, 1),
			bf(float32(math.Abs(float64(w))) * 3),
			bf(mfmin(b-fl(b), math.Float32frombits(0x3f7fffff))),
			bf(b + float32(float32(y-b)*0.25)),
			mclamp(z, 0, 1),
			bf(b + bf(b*0.5)),
			bf(w + bf(w*0.5)),
			bf(float32(math.Sqrt(float64(math.Abs(float64(y)))))),
			bf(bf(bf(b+y)+z) + w),
			mfmax(z, 0.5),
			bf(bf(b*3) / y),
			-b,
			b,
		}
		if b < y {
			o[19] = y
		}
		for k, x := range o {
			res[20*i+k] = bits(x)
		}
		a := f16.ToFloat64(hb[i])
		a2 := f16.ToFloat64(f16.FromFloat64(a * a))
		hres[3*i] = f16.FromFloat64(a * a)
		hres[3*i+1] = f16.FromFloat64(math.Sqrt(a2))
		hres[3*i+2] = f16.FromFloat64(math.Abs(a * a * a))
	}
	return tcase{name: "bfloat_math_and_half_pow", file: "bfloat.metal", entry: "bfloat_math", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, u16bytes(xb)), in(1, u16bytes(hb)), out(2, make([]byte, 2*len(res))), out(3, make([]byte, 2*len(hres)))},
		want: map[int][]byte{2: u16bytes(res), 3: u16bytes(hres)}, elem: 2}
}

// inlineAttrsCase runs helpers marked always_inline and noinline in GNU and
// clang spellings inside unrolled loops: the markings change nothing.
func inlineAttrsCase() tcase {
	const n = 64
	r := rng(43)
	x := make([]float32, n)
	for i := range x {
		x[i] = r.float()
	}
	y := make([]float32, 2*n)
	for i, v := range x {
		var s float32
		for k := 0; k < 8; k++ {
			s += float32(float32(k)*v) + 1
		}
		t := s + s
		u := float32(t+t) + t
		y[2*i] = u * u
		y[2*i+1] = float32(f16.BFloatToFloat64(f16.BFloatFromFloat64(float64(u * u))))
	}
	return tcase{name: "inline_attributes", file: "inline_attrs.metal", entry: "inline_attrs", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, f32bytes(x)), out(1, make([]byte, 8*n))},
		want: map[int][]byte{1: f32bytes(y)}, elem: 4}
}

// relationalCase checks the relational functions on special values.
func relationalCase() tcase {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)),
		0, 1e-40, 1e-5, 70000, -2.5, 0.75, 65504, -1e-45}
	r := rng(44)
	const n = 64
	v := make([]float32, 4*n)
	for i := range v {
		if r.next()%2 == 0 {
			v[i] = specials[r.next()%uint32(len(specials))]
		} else {
			v[i] = r.float() * 4
		}
	}
	for i := 0; i < 4; i++ {
		v[4*i+i] = specials[i] // the first threads see NaN and the infinities for sure
	}
	isnormal32 := func(x float32) bool {
		e := math.Float32bits(x) >> 23 & 0xff
		return e != 0 && e != 0xff
	}
	res := make([]uint32, 2*n)
	for i := 0; i < n; i++ {
		x := v[4*i : 4*i+4]
		var w uint32
		k := 0
		set := func(b bool) {
			if b {
				w |= 1 << k
			}
			k++
		}
		allEq, anyInf, allOrd, anyUnordH := true, false, true, false
		var sum float32
		for c := 0; c < 4; c++ {
			f := float64(x[c])
			h := f16.FromFloat64(f)
			set(math.IsNaN(f))
			set(math.IsInf(f, 0))
			set(!math.IsNaN(f) && !math.IsInf(f, 0))
			set(isnormal32(x[c]))
			set(math.Signbit(f))
			set(h&0x7c00 != 0 && h&0x7c00 != 0x7c00)
			allEq = allEq && x[c] == x[c]
			anyInf = anyInf || math.IsInf(f, 0)
			allOrd = allOrd && x[c] == x[c] && x[(c+1)%4] == x[(c+1)%4]
			anyUnordH = anyUnordH || h&0x7fff > 0x7c00
		}
		set(allEq)
		set(anyInf)
		set(allOrd)
		set(anyUnordH)
		for c := 0; c < 4; c++ {
			f := float64(x[c])
			if !math.IsNaN(f) && !math.IsInf(f, 0) && !math.Signbit(f) {
				sum += x[c]
			} else {
				sum += 0
			}
		}
		res[2*i], res[2*i+1] = w, math.Float32bits(sum)
	}
	return tcase{name: "relational", file: "mixed_math.metal", entry: "relational", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, f32bytes(v)), out(1, make([]byte, 8*n))},
		want: map[int][]byte{1: u32bytes(res)}, elem: 4}
}

// integerBitsCase checks the integer bit functions against math/bits.
func integerBitsCase() tcase {
	const n = 96
	r := rng(45)
	a, b := make([]uint32, n), make([]uint32, n)
	for i := range a {
		a[i], b[i] = r.next(), r.next()
	}
	a[0], a[1], b[1] = 0, math.MaxUint32, 0 // clz and ctz of zero are the width
	res := make([]uint32, 14*n)
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		sx, sy := int32(x), int32(y)
		hx, cx := uint16(x), uint8(x)
		o := res[14*i:]
		o[0] = uint32(bits.OnesCount32(x)) | uint32(bits.OnesCount16(hx))<<8 | uint32(bits.OnesCount8(cx))<<16
		o[1] = uint32(bits.LeadingZeros32(x)) | uint32(bits.LeadingZeros16(hx))<<8 | uint32(bits.LeadingZeros8(cx))<<16 |
			uint32(bits.LeadingZeros32(x))<<24
		o[2] = uint32(bits.TrailingZeros32(x)) | uint32(bits.TrailingZeros16(hx))<<8 | uint32(bits.TrailingZeros8(cx))<<16
		o[3] = bits.Reverse32(x)
		o[4] = bits.RotateLeft32(x, int(y%32)) ^ uint32(bits.RotateLeft16(hx, int(uint16(y)%16)))<<16
		off := y % 32
		nb := (y >> 8) % (33 - off)
		if nb > 0 {
			o[5] = x >> off & uint32(uint64(1)<<nb-1)
		}
		o[6] = uint32(sx << 16 >> 20) // bits 4..15, sign-extended
		mask := uint32(0xfff) << 8
		o[7] = x&^mask | y<<8&mask
		o[8] = uint32((uint64(x)+uint64(y))>>1) ^ uint32((uint64(x)+uint64(y)+1)>>1)<<1
		o[9] = uint32(int32((int64(sx)+int64(sy))>>1)) ^ uint32(int32((int64(sx)+int64(sy)+1)>>1))
		o[10] = uint32(uint64(x) * uint64(y) >> 32)
		o[11] = uint32(int32(int64(sx) * int64(sy) >> 32))
		o[12] = uint32(sx)
		if sx < 0 {
			o[12] = -uint32(sx)
		}
		v := []uint32{x, y, x ^ y, x + y}
		var s uint32
		for c, e := range v {
			s += uint32(c+1) * uint32(bits.OnesCount32(e))
		}
		o[13] = s + bits.Reverse32(v[3])
	}
	return tcase{name: "integer_bits", file: "integer_ext.metal", entry: "integer_bits", tgs: dim(3), threads: dim(n / 3),
		bufs: []backend.Buffer{in(0, u32bytes(a)), in(1, u32bytes(b)), out(2, make([]byte, 4*len(res)))},
		want: map[int][]byte{2: u32bytes(res)}, elem: 4}
}

// dotN is the prelude's dot: products rounded, summed in component order.
func dotN(a, b []float32) float32 {
	s := float32(a[0] * b[0])
	for i := 1; i < len(a); i++ {
		s += float32(a[i] * b[i])
	}
	return s
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// normalizeN is a * rsqrt(dot(a, a)), rsqrt being 1 / sqrt.
func normalizeN(a []float32) []float32 {
	k := 1 / sqrt32(dotN(a, a))
	r := make([]float32, len(a))
	for i := range a {
		r[i] = a[i] * k
	}
	return r
}

func subN(a, b []float32) []float32 {
	r := make([]float32, len(a))
	for i := range a {
		r[i] = a[i] - b[i]
	}
	return r
}

// geometricCase checks the geometric functions against their definitions
// in the prelude's operation order.
func geometricCase() tcase {
	const n = 64
	r := rng(46)
	a, b := make([]float32, 4*n), make([]float32, 4*n)
	for i := range a {
		a[i], b[i] = r.float()*3, r.float()*3
	}
	res := make([]float32, 20*n)
	hres := make([]uint16, n)
	for i := 0; i < n; i++ {
		x, y := a[4*i:4*i+4], b[4*i:4*i+4]
		x3, y3 := x[:3], y[:3]
		nn := normalizeN(y3)
		o := res[20*i:]
		o[0] = dotN(x, y)
		o[1] = sqrt32(dotN(x, x))
		o[2] = dotN(x3, x3)
		o[3] = sqrt32(dotN(subN(x, y), subN(x, y)))
		o[4] = dotN(subN(x[:2], y[:2]), subN(x[:2], y[:2]))
		o[5] = float32(x[1]*y[2]) - float32(x[2]*y[1])
		o[6] = float32(x[2]*y[0]) - float32(x[0]*y[2])
		o[7] = float32(x[0]*y[1]) - float32(x[1]*y[0])
		o[8], o[9] = nn[0], nn[2]
		o[10] = -nn[1]
		if dotN([]float32{y[2], y[0], y[1]}, x3) < 0 {
			o[10] = nn[1]
		}
		d := float32(2 * dotN(nn, x3))
		o[11], o[12] = x[0]-float32(d*nn[0]), x[2]-float32(d*nn[2])
		refract := func(in []float32, eta float32) []float32 {
			d := dotN(nn, in)
			k := 1 - float32(float32(eta*eta)*float32(1-float32(d*d)))
			if k < 0 {
				return []float32{0, 0, 0}
			}
			s := float32(eta*d) + sqrt32(k)
			out := make([]float32, 3)
			for c := range out {
				out[c] = float32(eta*in[c]) - float32(s*nn[c])
			}
			return out
		}
		t := refract(normalizeN(x3), 0.75)
		o[13], o[14], o[15] = t[0], t[1], t[2]
		tir := refract(normalizeN(x3), 4)
		o[16] = tir[0] + tir[1] + tir[2]
		o[17] = sqrt32(dotN(x[:2], x[:2]))
		o[18] = sqrt32(dotN(subN(x3, y3), subN(x3, y3)))
		o[19] = normalizeN(x)[3]
		hs := halfR(float32(halfR(x[0]) * halfR(y[0])))
		for c := 1; c < 3; c++ {
			hs = halfR(hs + halfR(float32(halfR(x[c])*halfR(y[c]))))
		}
		hres[i] = f16.FromFloat64(float64(hs))
	}
	return tcase{name: "geometric", file: "geometric.metal", entry: "geometric", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, f32bytes(a)), in(1, f32bytes(b)), out(2, make([]byte, 4*len(res))), out(3, make([]byte, 2*n))},
		want: map[int][]byte{2: f32bytes(res), 3: u16bytes(hres)}, elem: 4}
}
