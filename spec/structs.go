package spec

import (
	"fmt"
	"go/token"

	"go.yaml.in/yaml/v3"
)

// A fieldValue is the value of a struct field as written: one expression
// for every array element and lane, or a list with one entry per array
// element (an array field, len: N) or per lane (a vector field). An array
// element's entry may itself be a list of lanes.
type fieldValue struct {
	e    *Expr         // or nil when list is set
	list []*fieldValue // per element or per lane
	pos  token.Position
}

// fieldValue parses the value of field f: an expression, or a list that
// follows the field's shape.
func (p *parser) fieldValue(n *yaml.Node, f *Field, what string) *fieldValue {
	if f.Type != nil && f.Type.Kind == Struct {
		p.errorf(n, "%s: a nested struct field takes no value; give values to the fields of struct %q", what, f.Type.Name)
		return nil
	}
	return p.fieldValueAt(n, f.Type, f.Len, what)
}

func (p *parser) fieldValueAt(n *yaml.Node, t *Type, arrayLen int, what string) *fieldValue {
	fv := &fieldValue{pos: p.pos(n)}
	if n.Kind != yaml.SequenceNode {
		fv.e = p.expr(n, what)
		if fv.e == nil {
			return nil
		}
		return fv
	}
	switch {
	case arrayLen > 0:
		if len(n.Content) != arrayLen {
			p.errorf(n, "%s: %d values for an array of %d elements", what, len(n.Content), arrayLen)
			return nil
		}
		for i, c := range n.Content {
			v := p.fieldValueAt(c, t, 0, fmt.Sprintf("%s[%d]", what, i))
			if v == nil {
				return nil
			}
			fv.list = append(fv.list, v)
		}
	case t != nil && t.Kind == Vector:
		if len(n.Content) != t.Lanes {
			p.errorf(n, "%s: %d values for the %d lanes of %s", what, len(n.Content), t.Lanes, t.Name)
			return nil
		}
		for l, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				p.errorf(c, "%s: lane %d: want an expression", what, l)
				return nil
			}
			e := p.expr(c, fmt.Sprintf("%s lane %d", what, l))
			if e == nil {
				return nil
			}
			fv.list = append(fv.list, &fieldValue{e: e, pos: p.pos(c)})
		}
	default:
		name := "?"
		if t != nil {
			name = t.Name
		}
		p.errorf(n, "%s: a list of values needs an array field (len) or a vector field, not a %s", what, name)
		return nil
	}
	return fv
}

// exprs returns every expression of fv, for variable checks.
func (fv *fieldValue) exprs() []*Expr {
	if fv == nil {
		return nil
	}
	if fv.e != nil {
		return []*Expr{fv.e}
	}
	var out []*Expr
	for _, c := range fv.list {
		out = append(out, c.exprs()...)
	}
	return out
}

// at returns the expression for array element j and lane l of a field
// with array length n (0 for a plain field).
func (fv *fieldValue) at(n, j, l int) *Expr {
	if n > 0 && fv.list != nil {
		fv = fv.list[j]
	}
	if fv.list != nil {
		fv = fv.list[l]
	}
	return fv.e
}

// fillStruct lays out count struct elements from field values; in their
// expressions i is the element index and j the index within an array
// field.
func fillStruct(data []byte, t *Type, count int, values map[string]*fieldValue, vars map[string]any) error {
	ev := make(map[string]any, len(vars)+2)
	for k, v := range vars {
		ev[k] = v
	}
	for i := range count {
		ev["i"] = i
		for _, f := range t.Fields {
			fv := f.value
			if v, ok := values[f.Name]; ok {
				fv = v
			}
			if fv == nil || f.Type.Kind == Struct {
				continue // zero
			}
			n := scalarSizes[f.Type.Scalar]
			for j := range max(f.Len, 1) {
				ev["j"] = j
				for l := range f.Type.Lanes {
					x, err := fv.at(f.Len, j, l).Float(ev)
					if err != nil {
						return err
					}
					putScalar(data[i*t.Size+f.Offset+j*f.Type.Size+l*n:], f.Type.Scalar, x)
				}
			}
		}
	}
	return nil
}
