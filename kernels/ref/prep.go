package ref

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"metalab/internal/f16"
)

// Rot is the number of leading dims of every q and k head that qsa_prep
// rotates; dim i < Rot/2 pairs with dim i + Rot/2.
const Rot = 64

// A PrepResult is the reference of qsa_prep.
type PrepResult struct {
	Q *Expect // qo, fp16 [T][H][D]
	// K and V are the values qsa_prep quantises, [T][KVH][D]: token t goes
	// to cache cell Pos0 + t.
	K, V *Expect
}

// Prep is the reference of qsa_prep: RMS norm of each token's fused
// projection row x (float [T][(H+2*KVH)*D]) with weight g, rotary embedding
// of the first Rot dims of every q and k head with the (cos, sin) table
// rope (float2 [NPos][Rot/2]) at row Pos0 + t, for tokens whose row exists.
//
// The bound allows the float32 sum of squares over the row (n terms) and
// the rsqrt, then a few roundings per product and per rotation term.
func Prep(p Params, x, g, rope []byte) (*PrepResult, error) {
	if p.H%2 != 0 {
		return nil, fmt.Errorf("params: H=%d is odd", p.H)
	}
	nh := p.H + 2*p.KVH
	n := nh * D
	for _, c := range []struct {
		name string
		b    []byte
		n    int
	}{
		{"x", x, p.T * n * 4},
		{"g", g, n * 4},
		{"rope", rope, p.NPos * Rot / 2 * 8},
	} {
		if err := need(c.name, c.b, c.n); err != nil {
			return nil, err
		}
	}
	xs := Floats(x[:p.T*n*4])
	gs := Floats(g[:n*4])
	cs := Floats(rope[:p.NPos*Rot/2*8])
	r := &PrepResult{Q: newExpect(p.T * p.H * D), K: newExpect(p.T * p.KVH * D), V: newExpect(p.T * p.KVH * D)}
	rel := float64(n+16)*u + 6*u
	row := make([]float64, n)
	for t := range p.T {
		xr := xs[t*n : (t+1)*n]
		var sq float64
		for _, v := range xr {
			sq += v * v
		}
		rs := 1 / math.Sqrt(sq/float64(n)+float64(float32(p.Eps)))
		for i, v := range xr {
			row[i] = v * rs * gs[i]
		}
		pos := p.Pos0 + t
		for head := range nh {
			for d := range D {
				v := row[head*D+d]
				mag := math.Abs(v)
				if head < p.H+p.KVH && d < Rot && pos < p.NPos {
					c, s := cs[(pos*Rot/2+d%(Rot/2))*2], cs[(pos*Rot/2+d%(Rot/2))*2+1]
					o := row[head*D+(d^(Rot/2))]
					if d < Rot/2 {
						v = v*c - o*s
					} else {
						v = v*c + o*s
					}
					mag = math.Abs(row[head*D+d]*c) + math.Abs(o*s)
				}
				b := rel * mag
				switch {
				case head < p.H:
					i := (t*p.H+head)*D + d
					r.Q.Want[i], r.Q.Bound[i] = v, halfBound(v, b)
				case head < p.H+p.KVH:
					i := (t*p.KVH+head-p.H)*D + d
					r.K.Want[i], r.K.Bound[i] = v, b
				default:
					i := (t*p.KVH+head-p.H-p.KVH)*D + d
					r.V.Want[i], r.V.Bound[i] = v, b
				}
			}
		}
	}
	return r, nil
}

// CheckQuant checks an int8 cache (q8, [NCells][KVH][D]) and its fp16 group
// scales (sc, [NCells][KVH][D/Group]) that qsa_prep wrote from the values
// in want ([T][KVH][D], token t at cell Pos0 + t): each scale must be the
// fp16 rounding of max|x|/127 for values x within their bounds, and each
// int8 value clamp(round(x/scale), -127, 127) for such an x (0 where the
// scale is 0). Cells outside the batch must keep their bytes from orig8 and
// origSc.
func CheckQuant(name string, p Params, want *Expect, orig8, origSc, q8, sc []byte) error {
	rows := p.NCells * p.KVH
	for _, c := range []struct {
		name string
		b    []byte
		n    int
	}{
		{"orig " + name, orig8, rows * D},
		{"orig " + name + " scales", origSc, rows * D / Group * 2},
		{name, q8, rows * D},
		{name + " scales", sc, rows * D / Group * 2},
	} {
		if err := need(c.name, c.b, c.n); err != nil {
			return err
		}
	}
	var bad []string
	count := 0
	report := func(format string, args ...any) {
		count++
		if len(bad) < 5 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	first, last := p.Pos0*p.KVH, min(p.Pos0+p.T, p.NCells)*p.KVH // rows written
	for r := range rows {
		if r < first || r >= last {
			for i := r * D; i < (r+1)*D; i++ {
				if q8[i] != orig8[i] {
					report("%s[%d] = %d changed outside the batch (was %d)", name, i, int8(q8[i]), int8(orig8[i]))
				}
			}
			for i := r * D / Group * 2; i < (r+1)*D/Group*2; i++ {
				if sc[i] != origSc[i] {
					report("%s scale byte %d changed outside the batch", name, i)
				}
			}
			continue
		}
		w := r - first // row of want: (t, kvh)
		for grp := range D / Group {
			o := w*D + grp*Group
			var amax, emax float64
			for i := range Group {
				amax = max(amax, math.Abs(want.Want[o+i]))
				emax = max(emax, want.Bound[o+i])
			}
			si := r*D/Group + grp
			s := f16.ToFloat64(binary.LittleEndian.Uint16(sc[2*si:]))
			lo := max(0, amax-emax) / 127 * (1 - u)
			hi := (amax + emax) / 127 * (1 + u)
			if !(s >= lo-halfRel*hi-halfTiny && s <= hi+halfRel*hi+halfTiny) {
				report("%s scale [%d] = %g, want %g ± %.3g", name, si, s, amax/127, hi-amax/127+halfRel*hi+halfTiny)
				continue
			}
			for i := range Group {
				qi := r*D + grp*Group + i
				got := float64(int8(q8[qi]))
				qlo, qhi := 0.0, 0.0
				if s > 0 {
					a := (want.Want[o+i] - want.Bound[o+i]) / s
					b := (want.Want[o+i] + want.Bound[o+i]) / s
					qlo = quant(a - 2*u*math.Abs(a))
					qhi = quant(b + 2*u*math.Abs(b))
				}
				if got < qlo || got > qhi {
					report("%s[%d] = %v, want %v..%v (x = %g, scale %g)", name, qi, got, qlo, qhi, want.Want[o+i], s)
				}
			}
		}
	}
	if count > 0 {
		return fmt.Errorf("%s: %d bad elements: %s", name, count, strings.Join(bad, "; "))
	}
	return nil
}

// quant is the kernel's int8 rounding: half away from zero, clamped.
func quant(x float64) float64 {
	return max(-127, min(127, math.Round(x)))
}

// Pool is the reference of qsa_pool: pooled float [NPool][KVH][D], the mean
// over the cells of each 64-cell block below min(Pos0+T, NCells) of the
// dequantised keys kq [NCells][KVH][D] times ksc [NCells][KVH][D/Group];
// rows without cells are zero.
func Pool(p Params, kq, ksc []byte) (*Expect, error) {
	rows := p.NCells * p.KVH
	if err := need("kq", kq, rows*D); err != nil {
		return nil, err
	}
	if err := need("ksc", ksc, rows*D/Group*2); err != nil {
		return nil, err
	}
	scales := Halves(ksc[:rows*D/Group*2])
	kvlen := min(p.Pos0+p.T, p.NCells)
	e := newExpect(p.NPool * p.KVH * D)
	for j := range p.NPool {
		c0, c1 := j*64, min(j*64+64, kvlen)
		if c0 >= c1 {
			continue
		}
		cnt := float64(c1 - c0)
		for kvh := range p.KVH {
			for d := range D {
				var s, mag float64
				for c := c0; c < c1; c++ {
					r := c*p.KVH + kvh
					x := float64(int8(kq[r*D+d])) * scales[r*D/Group+d/Group]
					s += x
					mag += math.Abs(x)
				}
				i := (j*p.KVH+kvh)*D + d
				e.Want[i] = s / cnt
				e.Bound[i] = (Chunk + 4) * u * mag / cnt
			}
		}
	}
	return e, nil
}
