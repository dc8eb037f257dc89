package conformance

import (
	"metalab/backend"
	"metalab/internal/f16"
)

// tensorCases are the conformance cases of the tensor rows of the
// prelude's README table: MSL 4 tensors (indexing, bounds, strides,
// slices at positive and negative offsets, static slices), cooperative
// tensors from matmul2d (element access, the distribution over the
// scope, iteration, load and store, execution_simdgroup and
// execution_thread, transposed operands, half operands) and the
// simd-group asynchronous copies metal-flash-attention declares.
func tensorCases() []tcase {
	return []tcase{tensorIndexCase(), tensorSliceCase(), coopElementsCase(), coopThreadCase(), coopShiftedCase(), asyncCopyCase()}
}

// seq is 1, 2, ..., n as floats.
func seq(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i + 1)
	}
	return v
}

func tensorIndexCase() tcase {
	buf := seq(40)
	o := make([]float32, 64)
	for i := 0; i < 40; i++ {
		if x, y := i%8, i/8; x < 6 {
			o[i] = buf[y*8+x]
		}
	}
	copy(o[40:], []float32{6, 5, 1, 8, 2, 4, buf[4*8+5]})
	o[48+2*4+3] = 7
	return tcase{name: "tensor_index", file: "tensor.metal", entry: "tensor_index", tgs: dim(1), threads: dim(40),
		bufs: []backend.Buffer{out(0, f32bytes(buf)), out(1, make([]byte, 4*len(o)))},
		want: map[int][]byte{0: f32bytes(buf), 1: f32bytes(o)}, elem: 4}
}

func tensorSliceCase() tcase {
	buf := seq(64)
	at := func(x, y int) float32 {
		if x < 0 || y < 0 || x >= 8 || y >= 8 {
			return 0
		}
		return buf[y*8+x]
	}
	o := make([]float32, 264)
	for i := 0; i < 64; i++ {
		x, y := i%8, i/8
		o[i], o[64+i] = -1, -1
		if x < 6 && y < 5 {
			o[i] = at(x+2, y+3)
		}
		if x < 4 && y < 2 {
			o[64+i] = at(x+3, y+4)
		}
		o[128+i] = at(x, y)
		o[192+i] = at(x, y-2)
	}
	copy(o[256:], []float32{6, 5, 10, 8})
	return tcase{name: "tensor_slice", file: "tensor.metal", entry: "tensor_slice", tgs: dim(1), threads: dim(64),
		bufs: []backend.Buffer{in(0, f32bytes(buf)), out(1, make([]byte, 4*len(o)))},
		want: map[int][]byte{1: f32bytes(o)}, elem: 4}
}

// coopElementsCase: D = A * B (16 x 24 by 24 x 8) of half values; each
// product is exact in float, each sum rounded, k in order. Destination
// element e = m * 8 + n is element e / 32 of lane e % 32.
func coopElementsCase() tcase {
	r := rng(60)
	const m, n, k = 16, 8, 24
	at, b := make([]uint16, k*m), make([]uint16, k*n)
	af, bf := make([]float32, k*m), make([]float32, k*n)
	for i := range at {
		at[i] = f16.FromFloat64(float64(r.float()))
		af[i] = float32(f16.ToFloat64(at[i]))
	}
	for i := range b {
		b[i] = f16.FromFloat64(float64(r.float()))
		bf[i] = float32(f16.ToFloat64(b[i]))
	}
	d, owner, stored, visits := make([]float32, m*n), make([]float32, m*n), make([]float32, m*n), make([]float32, m*n)
	for row := 0; row < m; row++ {
		for col := 0; col < n; col++ {
			var acc float32
			for x := 0; x < k; x++ {
				acc = acc + float32(af[x*m+row]*bf[x*n+col])
			}
			e := row*n + col
			d[e], stored[e] = acc, acc+1
			owner[e] = float32((e%32)*100 + e/32)
			visits[e] = float32(e / 32)
		}
	}
	return tcase{name: "cooperative_tensor_elements", file: "tensor.metal", entry: "coop_elements", tgs: dim(1), threads: dim(32),
		bufs: []backend.Buffer{in(0, u16bytes(at)), in(1, u16bytes(b)), out(2, make([]byte, 4*m*n)), out(3, make([]byte, 4*m*n)),
			out(4, make([]byte, 4*m*n)), out(5, make([]byte, 4*m*n))},
		want: map[int][]byte{2: f32bytes(d), 3: f32bytes(owner), 4: f32bytes(stored), 5: f32bytes(visits)}, elem: 4}
}

// coopThreadCase: each of 8 threads D_i = C0 + (A * (i+1)) * B, B given
// transposed, the sum started at C0's element.
func coopThreadCase() tcase {
	r := rng(61)
	a, bt, c0 := make([]float32, 16), make([]float32, 16), make([]float32, 16)
	for i := range a {
		a[i], bt[i], c0[i] = r.float(), r.float(), r.float()
	}
	d := make([]float32, 8*16)
	for t := 0; t < 8; t++ {
		for row := 0; row < 4; row++ {
			for col := 0; col < 4; col++ {
				acc := c0[row*4+col]
				for x := 0; x < 4; x++ {
					la := float32(a[row*4+x] * float32(t+1))
					acc = acc + float32(la*bt[col*4+x])
				}
				d[t*16+row*4+col] = acc
			}
		}
	}
	return tcase{name: "cooperative_tensor_thread", file: "tensor.metal", entry: "coop_thread", tgs: dim(1), threads: dim(8),
		bufs: []backend.Buffer{in(0, f32bytes(a)), in(1, f32bytes(bt)), in(2, f32bytes(c0)), out(3, make([]byte, 4*len(d)))},
		want: map[int][]byte{3: f32bytes(d)}, elem: 4}
}

func asyncCopyCase() tcase {
	src := seq(64)
	var tile [2][32]float32
	for sg := 0; sg < 2; sg++ {
		for y := 0; y < 4; y++ {
			for x := 0; x < 8; x++ {
				switch {
				case x < 5 && y < 3:
					tile[sg][y*8+x] = src[5*sg+y*10+x]
				case sg == 1:
					tile[sg][y*8+x] = src[5*sg+min(y, 2)*10+min(x, 4)]
				}
			}
		}
	}
	o := make([]float32, 80)
	for sg := 0; sg < 2; sg++ {
		for y := 0; y < 4; y++ {
			for x := 0; x < 6; x++ {
				o[40*sg+y*10+x] = tile[1-sg][y*8+x]
			}
		}
	}
	flat := make([]float32, 64)
	for l := 0; l < 32; l++ {
		flat[l] = src[l] + tile[0][l]
		flat[32+l] = src[32+l] + tile[1][l]
	}
	return tcase{name: "simdgroup_async_copy", file: "async_copy.metal", entry: "async_tiles", tgs: dim(1), threads: dim(64),
		bufs: []backend.Buffer{in(0, f32bytes(src)), out(1, make([]byte, 4*len(o))), out(2, make([]byte, 4*len(flat)))},
		want: map[int][]byte{1: f32bytes(o), 2: f32bytes(flat)}, elem: 4, tgmem: 512}
}

func coopShiftedCase() tcase {
	shifted, reloaded := make([]float32, 48), make([]float32, 64)
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			if y >= 2 {
				shifted[(y-2)*8+x] = float32(y*8 + x)
				reloaded[y*8+x] = float32(y*8+x) + 0.5
			} else {
				reloaded[y*8+x] = 0.5
			}
		}
	}
	return tcase{name: "cooperative_tensor_negative_slice", file: "tensor.metal", entry: "coop_shifted", tgs: dim(1), threads: dim(32),
		bufs: []backend.Buffer{in(0, f32bytes(seq(64))), out(1, make([]byte, 4*len(shifted))), out(2, make([]byte, 4*len(reloaded)))},
		want: map[int][]byte{1: f32bytes(shifted), 2: f32bytes(reloaded)}, elem: 4}
}
