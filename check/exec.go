package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"metalab/backend"
	"metalab/spec"
)

// Execute runs the stages of in, in order, each with its program from
// progs (progs[i] runs in.Stages[i]), on fresh copies of the instance's
// buffers, with one dispatch per stage. It returns the final bytes of every
// device buffer by name. A kernel failure is returned as a
// *backend.Failure (possibly wrapped).
func Execute(ctx context.Context, progs []backend.Program, in *spec.Instance, order backend.Order, timeout time.Duration) (map[string][]byte, error) {
	if len(progs) != len(in.Stages) {
		return nil, fmt.Errorf("execute: %d programs for %d stages", len(progs), len(in.Stages))
	}
	state := map[string][]byte{}
	for _, b := range in.Buffers {
		if b.Role != spec.Threadgroup {
			state[b.Name] = bytes.Clone(b.Data)
		}
	}
	for i, st := range in.Stages {
		d := backend.Dispatch{Threadgroups: st.Threadgroups, Threads: st.Threads, Repeat: 1, Order: order, Timeout: timeout}
		for _, bind := range st.Bindings {
			b := in.Buffer(bind.Buffer)
			if b.Role == spec.Threadgroup {
				d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Size: b.Size, Threadgroup: true})
				continue
			}
			d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Data: state[b.Name], Output: true})
		}
		res, err := progs[i].Run(ctx, d)
		if err != nil {
			var f *backend.Failure
			if errors.As(err, &f) && f.Kind == backend.BadAccess {
				// The backend knows buffers by index; say which is which.
				return nil, fmt.Errorf("stage %s (buffers %s): %w", st.Entry, bindingsText(st.Bindings), err)
			}
			return nil, fmt.Errorf("stage %s: %w", st.Entry, err)
		}
		for _, bind := range st.Bindings {
			if out, ok := res.Outputs[bind.Index]; ok {
				if _, dev := state[bind.Buffer]; dev {
					state[bind.Buffer] = bytes.Clone(out)
				}
			}
		}
	}
	return state, nil
}

// bindingsText lists a stage's bindings as "0 q, 1 kq, ...".
func bindingsText(bs []spec.Binding) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = fmt.Sprintf("%d %s", b.Index, b.Buffer)
	}
	return strings.Join(parts, ", ")
}

// Compare compares the device buffers of in between want and got and
// returns the first difference, or nil when every byte is equal. Input
// buffers are compared too: a variant must not write where its baseline
// does not, even into a buffer no later stage reads. The mismatch
// describes the first differing buffer in spec order and names the other
// differing buffers.
func Compare(in *spec.Instance, want, got map[string][]byte) *Mismatch {
	var first *Mismatch
	for _, b := range in.Buffers {
		if b.Role == spec.Threadgroup {
			continue
		}
		w, g := want[b.Name], got[b.Name]
		if bytes.Equal(w, g) {
			continue
		}
		if first != nil {
			first.Others = append(first.Others, b.Name)
			continue
		}
		m := &Mismatch{Case: in.Case.Set + "/" + in.Case.Name, Buffer: b.Name, Type: b.Type.Name, Elements: b.Count, Element: -1}
		size := b.Type.Size
		if len(w) != len(g) {
			m.Msg = fmt.Sprintf("length %d bytes, want %d", len(g), len(w))
		}
		n := min(len(w), len(g))
		for e := 0; e*size < n; e++ {
			lo, hi := e*size, min((e+1)*size, n)
			if bytes.Equal(w[lo:hi], g[lo:hi]) {
				continue
			}
			m.Differing++
			if m.Element < 0 {
				m.Element = e
				m.Coords = b.Coords(e)
				m.Want = spec.FormatElement(b.Type, w[lo:hi])
				m.Got = spec.FormatElement(b.Type, g[lo:hi])
			}
		}
		first = m
	}
	return first
}
