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

// ExecOptions say how to run a case.
type ExecOptions struct {
	Order   backend.Order
	Repeat  int           // dispatches per stage; 0 means 1
	Timeout time.Duration // per stage run; 0 means the backend's default
	// Stages, when positive, runs only the first Stages stages (timing a
	// stage needs the stages before it, whose outputs it reads, and none
	// after it). 0 means every stage.
	Stages int
	// From, when positive, skips the stages before it: their outputs are
	// in State.
	From int
	// State holds device buffers' bytes to start from, by name (what an
	// earlier execution's stages left); the buffers it lacks start from
	// the instance's bytes. It is read, never written.
	State map[string][]byte
	// StateKey, when set, names State's bytes for the backend: the caller
	// promises they are the same in every execution with this StateKey
	// (backend.Buffer.Key), so a GPU backend keeps them on the device.
	StateKey string
	// Timed, when set, marks the stages a timing sample times: the others
	// run once whatever Repeat says (they only feed the timed ones).
	Timed []bool
	// Discard says the caller needs no outputs (a timing sample): a
	// buffer is read back only when a later stage of the execution binds
	// it, and Execution.Outputs is nil.
	Discard bool
}

// An Execution is what running one case produced.
type Execution struct {
	Outputs map[string][]byte // final bytes of every device buffer, by name
	Stages  []StageRun        // in stage order
}

// A StageRun is one stage's part of an Execution.
type StageRun struct {
	Stage int // index in the instance's stages
	Entry string
	Times []time.Duration // as the backend measured them
	// Total is the backend's one timing sample of the stage's Repeat
	// dispatches, submitted together (backend.Result.Total), by the clock
	// its Info names.
	Total    time.Duration
	Findings []backend.Finding // the checking mode's, for programs built with it
}

// Findings returns the findings of every stage, each with its stage.
func (e *Execution) Findings() []StageFinding {
	var out []StageFinding
	for _, st := range e.Stages {
		for _, f := range st.Findings {
			out = append(out, StageFinding{Stage: st.Stage, Entry: st.Entry, Finding: f})
		}
	}
	return out
}

// A StageFinding is a finding and the stage it was seen in.
type StageFinding struct {
	Stage int
	Entry string
	backend.Finding
}

// ExecuteCase runs the stages of in (the first opts.Stages of them, when
// set, from opts.From), in order, each with its program from progs
// (progs[i] runs in.Stages[i]; progs may stop after the last stage run),
// starting from the instance's buffers (or opts.State). The instance's
// bytes are never written. Buffers whose bytes are the instance's (or
// State's, with a StateKey) carry a backend.Buffer.Key, so a GPU backend
// restores them on the device rather than receiving them again. A kernel
// failure is returned as a *backend.Failure (possibly wrapped); a
// *StageError says which stage failed.
func ExecuteCase(ctx context.Context, progs []backend.Program, in *spec.Instance, opts ExecOptions) (*Execution, error) {
	stages := in.Stages
	if opts.Stages < 0 || opts.Stages > len(stages) {
		return nil, fmt.Errorf("execute: %d stages asked for, the case has %d", opts.Stages, len(stages))
	}
	if opts.Stages > 0 {
		stages = stages[:opts.Stages]
	}
	if opts.From < 0 || opts.From > len(stages) {
		return nil, fmt.Errorf("execute: from stage %d of %d", opts.From, len(stages))
	}
	if len(progs) < len(stages) || len(progs) > len(in.Stages) {
		return nil, fmt.Errorf("execute: %d programs for %d stages", len(progs), len(stages))
	}
	for i := opts.From; i < len(stages); i++ {
		if progs[i] == nil {
			return nil, fmt.Errorf("execute: no program for stage %d (%s)", i, stages[i].Entry)
		}
	}
	repeat := opts.Repeat
	if repeat <= 0 {
		repeat = 1
	}
	state := map[string][]byte{}
	key := map[string]string{} // backend.Buffer.Key of the buffers whose bytes are known
	start := map[string]bool{} // buffers whose bytes are still those they started with
	for _, b := range in.Buffers {
		if b.Role == spec.Threadgroup {
			continue
		}
		start[b.Name] = true
		if data, ok := opts.State[b.Name]; ok {
			state[b.Name] = data
			if opts.StateKey != "" {
				key[b.Name] = opts.StateKey + "/" + b.Name
			}
			continue
		}
		state[b.Name] = b.Data
		if in.ID != 0 {
			key[b.Name] = fmt.Sprintf("case%d/%s", in.ID, b.Name)
		}
	}
	// bound[name] is the last stage that binds the buffer: with Discard,
	// only buffers a later stage binds are read back.
	bound := map[string]int{}
	for i := opts.From; i < len(stages); i++ {
		for _, bind := range stages[i].Bindings {
			bound[bind.Buffer] = i
		}
	}
	ex := &Execution{}
	for i := opts.From; i < len(stages); i++ {
		st := stages[i]
		n := repeat
		if i < len(opts.Timed) && !opts.Timed[i] {
			n = 1
		}
		d := backend.Dispatch{Threadgroups: st.Threadgroups, Threads: st.Threads, Repeat: n, Order: opts.Order, Timeout: opts.Timeout}
		for _, bind := range st.Bindings {
			b := in.Buffer(bind.Buffer)
			if b.Role == spec.Threadgroup {
				d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Size: b.Size, Threadgroup: true})
				continue
			}
			d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Data: state[b.Name], Output: true,
				Key: key[b.Name], Discard: opts.Discard && bound[b.Name] <= i})
		}
		res, err := progs[i].Run(ctx, d)
		if err != nil {
			return nil, &StageError{Stage: i, Entry: st.Entry, Bindings: st.Bindings, Err: err}
		}
		ex.Stages = append(ex.Stages, StageRun{Stage: i, Entry: st.Entry, Times: res.Times, Total: res.Total, Findings: res.Findings})
		for _, bind := range st.Bindings {
			if out, ok := res.Outputs[bind.Index]; ok {
				if _, dev := state[bind.Buffer]; dev {
					state[bind.Buffer] = out
					delete(key, bind.Buffer)
					delete(start, bind.Buffer)
				}
			}
		}
	}
	if opts.Discard {
		return ex, nil
	}
	// The bytes no stage replaced are the instance's (or the caller's):
	// the caller gets copies.
	for name := range start {
		state[name] = bytes.Clone(state[name])
	}
	ex.Outputs = state
	return ex, nil
}

// A StageError is a stage of a case that did not run to completion.
type StageError struct {
	Stage    int
	Entry    string
	Bindings []spec.Binding
	Err      error
}

func (e *StageError) Error() string {
	var f *backend.Failure
	if errors.As(e.Err, &f) && f.Kind == backend.BadAccess {
		// The backend knows buffers by index; say which is which.
		return fmt.Sprintf("stage %s (buffers %s): %v", e.Entry, bindingsText(e.Bindings), e.Err)
	}
	return fmt.Sprintf("stage %s: %v", e.Entry, e.Err)
}

func (e *StageError) Unwrap() error { return e.Err }

// Execute is ExecuteCase with one dispatch per stage, returning only the
// final bytes of every device buffer by name.
func Execute(ctx context.Context, progs []backend.Program, in *spec.Instance, order backend.Order, timeout time.Duration) (map[string][]byte, error) {
	ex, err := ExecuteCase(ctx, progs, in, ExecOptions{Order: order, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	return ex.Outputs, nil
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
// does not, even into a buffer no later stage reads. The padding bytes of
// an element type (between and after a struct's members, a 3-vector's
// fourth lane) hold no value and are not compared: a struct copied whole
// copies whatever they held. The mismatch describes the first differing
// buffer in spec order and names the other differing buffers.
func Compare(in *spec.Instance, want, got map[string][]byte) *Mismatch {
	var first *Mismatch
	eachDiffering(in, want, got, func(b *spec.Buffer, w, g []byte, pad []bool) {
		if first != nil {
			first.Others = append(first.Others, b.Name)
			return
		}
		m := &Mismatch{Case: in.Case.Set + "/" + in.Case.Name, Buffer: b.Name, Type: b.Type.Name, Elements: b.Count, Element: -1}
		size := b.Type.Size
		if len(w) != len(g) {
			m.Msg = fmt.Sprintf("length %d bytes, want %d", len(g), len(w))
		}
		n := min(len(w), len(g))
		for e := 0; e*size < n; e++ {
			lo, hi := e*size, min((e+1)*size, n)
			if bytes.Equal(w[lo:hi], g[lo:hi]) || (pad != nil && e < b.Count && hi-lo == size && equalMasked(pad, w[lo:hi], g[lo:hi])) {
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
	})
	return first
}

// eachDiffering calls f, in spec order, with each buffer of in (but
// threadgroup ones) whose bytes in got differ from want's other than in
// element padding, with the padding mask of its element type (nil for
// none).
func eachDiffering(in *spec.Instance, want, got map[string][]byte, f func(b *spec.Buffer, w, g []byte, pad []bool)) {
	for _, b := range in.Buffers {
		if b.Role == spec.Threadgroup {
			continue
		}
		w, g := want[b.Name], got[b.Name]
		if bytes.Equal(w, g) {
			continue
		}
		pad := paddingOf(b.Type)
		if pad != nil && len(w) == len(g) && equalValues(b, pad, w, g) {
			continue
		}
		f(b, w, g, pad)
	}
}

// paddingOf returns which bytes of an element of type t are padding (true),
// or nil when it has none.
func paddingOf(t *spec.Type) []bool {
	if t == nil || t.Size <= 0 || t.Kind == spec.Scalar {
		return nil
	}
	pad := make([]bool, t.Size)
	for i := range pad {
		pad[i] = true
	}
	eachLeaf(t, 0, func(t *spec.Type, off int) {
		n := t.Size
		if k, ok := scalarSize(t.Scalar); ok {
			n = k * max(t.Lanes, 1)
		}
		for i := off; i < off+n && i < len(pad); i++ {
			pad[i] = false
		}
	})
	for _, p := range pad {
		if p {
			return pad
		}
	}
	return nil
}

// eachLeaf calls f with every scalar or vector member of an element of
// type t at byte offset off, struct members and their array elements
// included, in layout order.
func eachLeaf(t *spec.Type, off int, f func(t *spec.Type, off int)) {
	if t.Kind != spec.Struct {
		f(t, off)
		return
	}
	for _, m := range t.Fields {
		for j := range max(m.Len, 1) {
			eachLeaf(m.Type, off+m.Offset+j*m.Type.Size, f)
		}
	}
}

// equalMasked reports whether two elements are equal but for padding.
func equalMasked(pad []bool, w, g []byte) bool {
	for i := range w {
		if w[i] != g[i] && !pad[i] {
			return false
		}
	}
	return true
}

// equalValues reports whether two contents of buffer b (of equal length)
// are equal but for the padding of its elements; slack bytes are compared.
func equalValues(b *spec.Buffer, pad []bool, w, g []byte) bool {
	size := b.Type.Size
	n := min(len(w), b.Count*size)
	for lo := 0; lo+size <= n; lo += size {
		if !equalMasked(pad, w[lo:lo+size], g[lo:lo+size]) {
			return false
		}
	}
	return bytes.Equal(w[n-n%size:], g[n-n%size:])
}
