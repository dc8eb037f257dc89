package ref

import (
	"errors"
	"fmt"
	"math"

	"metalab/spec"
)

// Verify checks the final buffers of one run of a qsa spec instance (out,
// by buffer name, as check.Execute returns them) against the references,
// stage by stage, and returns every failure joined, or nil. Each stage is
// checked against its actual inputs: buffers as the run left them, except
// that a buffer the stage itself updates (an inout cache, a prefilled
// output) is compared with its initial bytes. Arguments are found through
// the stage's bindings, so specs may name buffers as they like. A stage
// whose entry has no reference is an error.
func Verify(in *spec.Instance, out map[string][]byte) error {
	var errs []error
	for _, st := range in.Stages {
		if err := verifyStage(in, st, out); err != nil {
			errs = append(errs, fmt.Errorf("stage %s: %w", st.Entry, err))
		}
	}
	return errors.Join(errs...)
}

// args resolves a stage's arguments by index.
type args struct {
	in  *spec.Instance
	st  *spec.Stage
	out map[string][]byte
}

func (a args) name(i int) (string, error) {
	for _, b := range a.st.Bindings {
		if b.Index == i {
			return b.Buffer, nil
		}
	}
	return "", fmt.Errorf("no buffer bound at index %d", i)
}

// final returns the bytes of argument i after the run.
func (a args) final(i int) ([]byte, error) {
	n, err := a.name(i)
	if err != nil {
		return nil, err
	}
	b, ok := a.out[n]
	if !ok {
		return nil, fmt.Errorf("no output for buffer %q", n)
	}
	return b, nil
}

// initial returns the bytes of argument i before the run.
func (a args) initial(i int) ([]byte, error) {
	n, err := a.name(i)
	if err != nil {
		return nil, err
	}
	b := a.in.Buffer(n)
	if b == nil {
		return nil, fmt.Errorf("no buffer %q", n)
	}
	return b.Data, nil
}

// get fetches arguments: final bytes for each index in fin, then initial
// bytes for each index in ini.
func (a args) get(fin, ini []int) ([][]byte, error) {
	var out [][]byte
	for _, i := range fin {
		b, err := a.final(i)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	for _, i := range ini {
		b, err := a.initial(i)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func verifyStage(in *spec.Instance, st *spec.Stage, out map[string][]byte) error {
	a := args{in, st, out}
	paramsAt := map[string]int{"qsa_flash": 7, "qsa_attn_part": 7, "qsa_merge": 2, "qsa_score": 3, "qsa_prep": 8, "qsa_pool": 3}
	pi, ok := paramsAt[st.Entry]
	if !ok {
		return fmt.Errorf("no reference for entry %q", st.Entry)
	}
	pb, err := a.final(pi)
	if err != nil {
		return err
	}
	p, err := DecodeParams(pb)
	if err != nil {
		return err
	}
	check := func(name string, e *Expect, err error, got []float64) error {
		if err != nil {
			return err
		}
		return e.Check(name, got)
	}
	switch st.Entry {
	case "qsa_flash", "qsa_attn_part":
		b, err := a.get([]int{0, 1, 2, 3, 4, 5, 6}, nil)
		if err != nil {
			return err
		}
		if st.Entry == "qsa_flash" {
			e, err := Flash(p, b[0], b[1], b[2], b[3], b[4], b[5])
			return check("out", e, err, Halves(b[6]))
		}
		e, err := AttnPart(p, b[0], b[1], b[2], b[3], b[4], b[5])
		return check("part", e, err, Floats(b[6]))
	case "qsa_merge":
		b, err := a.get([]int{0, 1}, nil)
		if err != nil {
			return err
		}
		e, err := Merge(p, b[0])
		return check("out", e, err, Halves(b[1]))
	case "qsa_score":
		b, err := a.get([]int{0, 1, 2}, []int{2})
		if err != nil {
			return err
		}
		e, err := Score(p, b[0], b[1], b[3])
		return check("scores", e, err, Floats(b[2]))
	case "qsa_prep":
		b, err := a.get([]int{0, 1, 2, 3, 4, 5, 6, 7}, []int{4, 5, 6, 7})
		if err != nil {
			return err
		}
		r, err := Prep(p, b[0], b[1], b[2])
		if err != nil {
			return err
		}
		return errors.Join(
			r.Q.Check("qo", Halves(b[3])),
			CheckQuant("kq", p, r.K, b[8], b[9], b[4], b[5]),
			CheckQuant("vq", p, r.V, b[10], b[11], b[6], b[7]),
		)
	case "qsa_pool":
		b, err := a.get([]int{0, 1, 2}, nil)
		if err != nil {
			return err
		}
		e, err := Pool(p, b[0], b[1])
		return check("pooled", e, err, Floats(b[2]))
	}
	return nil
}

// Merge is the reference of qsa_merge given the chunk partials part (float
// [T][H][NSel/64][PartStride]): with M the largest chunk max, sum(num_i *
// w_i) / sum(l_i * w_i), w_i = exp(m_i - M), as fp16 [T][H][D]; zero where
// every chunk is empty. The bound allows a few ulps per weight and the sums
// over the chunks.
func Merge(p Params, part []byte) (*Expect, error) {
	nch := p.NSel / Chunk
	if err := need("part", part, p.T*p.H*nch*PartStride*4); err != nil {
		return nil, err
	}
	src := Floats(part[:p.T*p.H*nch*PartStride*4])
	e := newExpect(p.T * p.H * D)
	rel := float64(nch+4)*8*u + float64(nch+2)*u
	w := make([]float64, nch)
	for th := range p.T * p.H {
		s := src[th*nch*PartStride:]
		mx := math.Inf(-1)
		for ch := range nch {
			mx = max(mx, s[ch*PartStride+D])
		}
		if math.IsInf(mx, -1) {
			continue // zero, exactly
		}
		var l float64
		for ch := range nch {
			w[ch] = 0
			if m := s[ch*PartStride+D]; !math.IsInf(m, -1) {
				w[ch] = math.Exp(m - mx)
			}
			l += s[ch*PartStride+D+1] * w[ch]
		}
		for d := range D {
			var n, a float64
			for ch := range nch {
				n += s[ch*PartStride+d] * w[ch]
				a += math.Abs(s[ch*PartStride+d]) * w[ch]
			}
			i := th*D + d
			if l == 0 {
				continue // the kernel writes zero when the denominator is zero
			}
			e.Want[i] = n / l
			e.Bound[i] = halfBound(e.Want[i], 2*rel*(a/l+math.Abs(e.Want[i]))+u*math.Abs(e.Want[i]))
		}
	}
	return e, nil
}
