package ref

import (
	"math"
)

// cache is the decoded input of the attention kernels.
type cache struct {
	p        Params
	q        []float64 // [T][H][D]
	kq, vq   []byte    // [NCells][KVH][D]
	ksc, vsc []float64 // [NCells][KVH][D/Group]
	ids      []int     // [T][NSel]
}

func newCache(p Params, q, kq, ksc, vq, vsc, ids []byte) (*cache, error) {
	rows := p.NCells * p.KVH
	for _, c := range []struct {
		name string
		b    []byte
		n    int
	}{
		{"q", q, p.T * p.H * D * 2},
		{"kq", kq, rows * D},
		{"ksc", ksc, rows * D / Group * 2},
		{"vq", vq, rows * D},
		{"vsc", vsc, rows * D / Group * 2},
		{"ids", ids, p.T * p.NSel * 4},
	} {
		if err := need(c.name, c.b, c.n); err != nil {
			return nil, err
		}
	}
	return &cache{
		p:   p,
		q:   Halves(q[:p.T*p.H*D*2]),
		kq:  kq,
		vq:  vq,
		ksc: Halves(ksc[:rows*D/Group*2]),
		vsc: Halves(vsc[:rows*D/Group*2]),
		ids: Int32s(ids[:p.T*p.NSel*4]),
	}, nil
}

// cells returns the valid cell ids of query row t between ids j0 and j1, in
// order; ids outside [0, NCells) are not cells.
func (c *cache) cells(t, j0, j1 int) []int {
	var out []int
	for _, id := range c.ids[t*c.p.NSel+j0 : t*c.p.NSel+j1] {
		if id >= 0 && id < c.p.NCells {
			out = append(out, id)
		}
	}
	return out
}

// score returns the scaled score of query (t, h) against cell id and the
// scaled sum of the magnitudes of its terms.
func (c *cache) score(t, h, id int) (s, mag float64) {
	row := id*c.p.KVH + c.p.kvHead(h)
	qo := (t*c.p.H + h) * D
	for d := range D {
		x := c.q[qo+d] * float64(int8(c.kq[row*D+d])) * c.ksc[row*D/Group+d/Group]
		s += x
		mag += math.Abs(x)
	}
	return s * c.p.Scale, mag * math.Abs(c.p.Scale)
}

// v returns the dequantised value of cell id, head h, dim d.
func (c *cache) v(h, id, d int) float64 {
	row := id*c.p.KVH + c.p.kvHead(h)
	return float64(int8(c.vq[row*D+d])) * c.vsc[row*D/Group+d/Group]
}

// softmax holds the attention of one query over a list of cells.
type softmax struct {
	m, l  float64   // max score, denominator sum(p)
	p     []float64 // exp(s - m) per cell
	delta float64   // float32 error bound of any one score
}

func (c *cache) softmax(t, h int, cells []int) *softmax {
	sm := &softmax{m: math.Inf(-1), p: make([]float64, len(cells))}
	s := make([]float64, len(cells))
	for i, id := range cells {
		var mag float64
		s[i], mag = c.score(t, h, id)
		sm.m = max(sm.m, s[i])
		// D products and sums, the group scale, the partial
		// combination and the softmax scale, each one rounding.
		sm.delta = max(sm.delta, (D+12)*u*mag)
	}
	for i := range cells {
		sm.p[i] = math.Exp(s[i] - sm.m)
		sm.l += sm.p[i]
	}
	return sm
}

// pv returns sum(p * v) and sum(p * |v|) over the cells for dim d.
func (c *cache) pv(sm *softmax, h int, cells []int, d int) (n, a float64) {
	for i, id := range cells {
		v := c.v(h, id, d)
		n += sm.p[i] * v
		a += sm.p[i] * math.Abs(v)
	}
	return n, a
}

// Flash is the reference of qsa_flash: for every query token t and head h,
// softmax attention over the selected cells of row t, as fp16 [T][H][D].
// It is also the reference of qsa_attn_part followed by qsa_merge. A row
// without any valid cell is zero.
//
// The bound allows each score its float32 rounding error, twice that in
// every probability (score and max), a few ulps of exp per chunk for the
// running-max corrections, the rounding of sums over NSel cells, and the
// final fp16 rounding.
func Flash(p Params, q, kq, ksc, vq, vsc, ids []byte) (*Expect, error) {
	c, err := newCache(p, q, kq, ksc, vq, vsc, ids)
	if err != nil {
		return nil, err
	}
	nch := p.NSel / Chunk
	e := newExpect(p.T * p.H * D)
	for t := range p.T {
		cells := c.cells(t, 0, p.NSel)
		for h := range p.H {
			o := (t*p.H + h) * D
			if len(cells) == 0 {
				continue // zero, exactly
			}
			sm := c.softmax(t, h, cells)
			rel := 2*sm.delta + float64(nch+4)*8*u + float64(p.NSel+4)*u
			for d := range D {
				n, a := c.pv(sm, h, cells, d)
				w := n / sm.l
				e.Want[o+d] = w
				e.Bound[o+d] = halfBound(w, 2*rel*(a/sm.l+math.Abs(w))+u*math.Abs(w))
			}
		}
	}
	return e, nil
}

// AttnPart is the reference of qsa_attn_part: for every (token, head,
// chunk) the numerator sum(p*v) over the chunk's cells with p = exp(s - m),
// the chunk max m and the denominator sum(p), laid out as
// float [T][H][NSel/64][PartStride]. A chunk without cells has m = -Inf and
// zeros elsewhere.
func AttnPart(p Params, q, kq, ksc, vq, vsc, ids []byte) (*Expect, error) {
	c, err := newCache(p, q, kq, ksc, vq, vsc, ids)
	if err != nil {
		return nil, err
	}
	nch := p.NSel / Chunk
	e := newExpect(p.T * p.H * nch * PartStride)
	for t := range p.T {
		for ch := range nch {
			cells := c.cells(t, ch*Chunk, (ch+1)*Chunk)
			for h := range p.H {
				o := ((t*p.H+h)*nch + ch) * PartStride
				if len(cells) == 0 {
					e.Want[o+D] = math.Inf(-1)
					continue
				}
				sm := c.softmax(t, h, cells)
				rel := 2*sm.delta + 16*u + (Chunk+2)*u
				for d := range D {
					n, a := c.pv(sm, h, cells, d)
					e.Want[o+d] = n
					e.Bound[o+d] = rel * a
				}
				e.Want[o+D] = sm.m
				e.Bound[o+D] = sm.delta + u*math.Abs(sm.m)
				e.Want[o+D+1] = sm.l
				e.Bound[o+D+1] = rel * sm.l
			}
		}
	}
	return e, nil
}

// Score is the reference of qsa_score: scores float [H][T][NPool] of the
// fp16 queries [T][H][D] against the pooled keys float [NPool][KVH][D],
// times the softmax scale. Pooled key j is visible to the query at position
// pos when 64*j <= pos; dead keys (j >= NValid) are -Inf; every other
// element keeps its bytes from prefill, the output's initial contents.
func Score(p Params, q, pooled, prefill []byte) (*Expect, error) {
	n := p.H * p.T * p.NPool
	for _, c := range []struct {
		name string
		b    []byte
		n    int
	}{
		{"q", q, p.T * p.H * D * 2},
		{"pooled", pooled, p.NPool * p.KVH * D * 4},
		{"prefill", prefill, n * 4},
	} {
		if err := need(c.name, c.b, c.n); err != nil {
			return nil, err
		}
	}
	qv := Halves(q[:p.T*p.H*D*2])
	kv := Floats(pooled[:p.NPool*p.KVH*D*4])
	e := &Expect{Want: Floats(prefill[:n*4]), Bound: make([]float64, n)}
	for h := range p.H {
		kvh := p.kvHead(h)
		for t := range p.T {
			o := (h*p.T + t) * p.NPool
			for j := range p.NPool {
				switch {
				case j >= p.NValid:
					e.Want[o+j] = math.Inf(-1)
				case 64*j <= p.Pos0+t:
					var s, mag float64
					for d := range D {
						x := qv[(t*p.H+h)*D+d] * kv[(j*p.KVH+kvh)*D+d]
						s += x
						mag += math.Abs(x)
					}
					e.Want[o+j] = s * p.Scale
					e.Bound[o+j] = (D+4)*u*mag*math.Abs(p.Scale) + 0x1p-149
				}
			}
		}
	}
	return e, nil
}
