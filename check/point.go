package check

import (
	"bytes"
	"fmt"
	"slices"

	"metalab/spec"
)

// Points. A variant may run under a spec of its own (Variant.Spec): an
// instance of the baseline's spec at another point of its tunable
// parameters, with other threads, threadgroups, defines or constants.
// Each of its cases is the baseline's case of the same set and name,
// instantiated from the variant's spec; it must give the same input
// bytes and the same device buffers (names, roles, element types,
// counts), so that its outputs are compared with the baseline's, byte
// for byte or under Options.Parity, as any variant's. Its threadgroup
// memory is judged under its own stages' defines.

// pointSpec is the spec v runs under when it is not the session's, else
// nil.
func (c *checker) pointSpec(v Variant) *spec.Spec {
	if v.Spec == nil || v.Spec == c.opts.Spec {
		return nil
	}
	return v.Spec
}

// instance returns the instance src's variant runs case in under: in
// itself for a variant of the baseline's spec, else its own spec's
// instance of in's case, made once per spec and case.
func (c *checker) instance(src *sourceSet, in *spec.Instance) (*spec.Instance, error) {
	if src == nil || src.spec == nil {
		return in, nil
	}
	return c.pointInstance(src.spec, in)
}

// pointInstance returns ps's instance of in's case, checked against in.
// The instances of the session's cases are made once per spec and case
// (their bytes shared with the baseline's, which they equal); those of
// drawn cases each time.
func (c *checker) pointInstance(ps *spec.Spec, in *spec.Instance) (*spec.Instance, error) {
	if !c.listed(in) {
		pin, err := ps.Instantiate(in.Case)
		if err == nil {
			err = samePlace(in, pin)
		}
		if err != nil {
			return nil, fmt.Errorf("the variant's spec %s at case %s: %w", ps.Path, caseName(in), err)
		}
		return pin, nil
	}
	key := pointKey{ps, in}
	c.mu.Lock()
	if c.points == nil {
		c.points = map[pointKey]pointInst{}
		c.pointOf = map[*spec.Instance]bool{}
	}
	if pi, ok := c.points[key]; ok {
		c.mu.Unlock()
		return pi.in, pi.err
	}
	if c.pointOf[in] {
		// Already an instance of a point.
		c.mu.Unlock()
		return in, nil
	}
	c.mu.Unlock()
	pin, err := ps.Instantiate(in.Case)
	if err == nil {
		err = samePlace(in, pin)
	}
	if err != nil {
		err = fmt.Errorf("the variant's spec %s at case %s: %w", ps.Path, caseName(in), err)
		pin = nil
	} else {
		share(in, pin)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pi, ok := c.points[key]; ok {
		return pi.in, pi.err
	}
	c.points[key] = pointInst{pin, err}
	if pin != nil {
		c.pointOf[pin] = true
	}
	return pin, err
}

// listed reports whether in is one of the session's cases.
func (c *checker) listed(in *spec.Instance) bool {
	return slices.Contains(c.insts, in) || slices.Contains(c.vinsts, in)
}

// share makes p's device buffers hold b's bytes where they are equal, so
// that a point's instance costs no copy of its inputs. Instances' bytes
// are never written (runs copy them).
func share(b, p *spec.Instance) {
	for _, y := range p.Buffers {
		if y.Role == spec.Threadgroup {
			continue
		}
		if x := b.Buffer(y.Name); x != nil && bytes.Equal(x.Data, y.Data) {
			y.Data = x.Data
		}
	}
}

type pointKey struct {
	spec *spec.Spec
	in   *spec.Instance
}

type pointInst struct {
	in  *spec.Instance
	err error
}

// samePlace checks that a point's instance p of the baseline's instance
// b can be compared with it: the same stages' sources, the same device
// buffers and the same input bytes. Threadgroup buffers may differ.
func samePlace(b, p *spec.Instance) error {
	if len(b.Stages) != len(p.Stages) {
		return fmt.Errorf("%d stages, the baseline's spec has %d", len(p.Stages), len(b.Stages))
	}
	for i, st := range b.Stages {
		if p.Stages[i].Source != st.Source {
			return fmt.Errorf("stage %d compiles %s, the baseline's %s", i+1, p.Stages[i].Source, st.Source)
		}
	}
	device := func(in *spec.Instance) map[string]*spec.Buffer {
		m := map[string]*spec.Buffer{}
		for _, x := range in.Buffers {
			if x.Role != spec.Threadgroup {
				m[x.Name] = x
			}
		}
		return m
	}
	bm, pm := device(b), device(p)
	for _, x := range b.Buffers {
		if x.Role == spec.Threadgroup {
			continue
		}
		y, ok := pm[x.Name]
		switch {
		case !ok:
			return fmt.Errorf("no buffer %s (the baseline's spec has one)", x.Name)
		case y.Role != x.Role:
			return fmt.Errorf("buffer %s is %s, the baseline's %s", x.Name, y.Role, x.Role)
		case y.Type.Name != x.Type.Name || y.Type.Size != x.Type.Size:
			return fmt.Errorf("buffer %s holds %s, the baseline's %s", x.Name, y.Type.Name, x.Type.Name)
		case y.Count != x.Count || y.Size != x.Size:
			return fmt.Errorf("buffer %s has %d elements (%d bytes), the baseline's %d (%d bytes)", x.Name, y.Count, y.Size, x.Count, x.Size)
		case !bytes.Equal(y.Data, x.Data):
			return fmt.Errorf("buffer %s starts with other bytes than the baseline's (the same case must give the same inputs)", x.Name)
		}
	}
	for _, y := range p.Buffers {
		if _, ok := bm[y.Name]; !ok && y.Role != spec.Threadgroup {
			return fmt.Errorf("buffer %s, which the baseline's spec does not have", y.Name)
		}
	}
	return nil
}
