package check

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"metalab/backend"
	"metalab/spec"
)

// A variant's runs of a listed case run only the stages its edits reach,
// where the backend can say so. A stage whose program is the baseline's
// own object (backend.ObjectProgram: the same machine code, as both
// backends make for the stages of a translation pruned per entry) is a
// deterministic function of its inputs (the control ran the baseline
// twice), so:
//   - the stages before the first changed one are not run: the variant
//     starts from the baseline's state after them;
//   - when the state after the last changed stage is the baseline's, byte
//     for byte, the stages after it would give the baseline's final bytes;
//     otherwise they run, and the final bytes are judged as ever.
//
// The checking build's findings are then those of the stages that ran:
// the others ran the baseline's code on the baseline's bytes, and their
// findings are the baseline's, in the control. A qsa_flash variant of the
// bundled spec runs one stage of four at each case, and moves a fraction
// of the bytes. Drawn (held-out) cases and the cases of a variant's own
// spec run every stage.

// confirmRun runs case i of the confirmation (in, the variant's instance
// of c.insts[i]) with src's plain programs on the timing backend and
// returns the final bytes of every device buffer.
func (c *checker) confirmRun(ctx context.Context, src *sourceSet, in *spec.Instance, i int, limit time.Duration) (map[string][]byte, error) {
	progs, err := c.programs(ctx, c.run, src, in.Stages, false)
	if err != nil {
		return nil, err
	}
	order := backend.Order{Kind: "in-order"}
	if in != c.insts[i] {
		return Execute(ctx, progs, in, order, limit)
	}
	w, err := c.window(ctx, c.run, false, in, progs, limit)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return Execute(ctx, progs, in, order, limit)
	}
	if w.first < 0 {
		// Every stage runs the baseline's machine code on its inputs.
		return c.crefs[i], nil
	}
	ex, err := w.run(ctx, c, progs, in, order, limit)
	if err != nil {
		return nil, err
	}
	if ex == nil {
		return c.crefs[i], nil
	}
	return ex.Outputs, nil
}

// checkingWindow runs case in (one of c.vinsts) with src's checking
// programs progs on the verification backend through the window of the
// stages they change, when there is one; ok false says there is none
// (run every stage). The findings are the stages' that ran.
func (c *checker) checkingWindow(ctx context.Context, in *spec.Instance, progs []backend.Program, limit time.Duration) (ex *Execution, ok bool, err error) {
	if !slices.Contains(c.vinsts, in) {
		return nil, false, nil
	}
	w, err := c.window(ctx, c.ver, true, in, progs, limit)
	if err != nil || w == nil || w.first < 0 {
		return nil, false, err
	}
	order := backend.Order{Kind: "in-order"}
	ex, err = w.run(ctx, c, progs, in, order, limit)
	if err != nil {
		return nil, true, err
	}
	if ex == nil {
		// The window's own run, with the baseline's final bytes.
		final, err := c.baseState(ctx, c.ver, true, in, len(in.Stages), limit)
		if err != nil {
			return nil, true, err
		}
		ex = &Execution{Outputs: final, Stages: w.ran}
	}
	return ex, true, nil
}

// A stageWindow is the stages of a case a variant's programs change, and
// the baseline's states around them.
type stageWindow struct {
	detect       bool
	first, last  int               // first < 0: no stage changed
	before, want map[string][]byte // the baseline's state before first (nil at 0) and after last
	ran          []StageRun        // the stages run, once run
}

// window returns the stages of case in whose programs in progs (compiled
// for be, the checking build when detect) are not the baseline's machine
// code, or nil when that is not known for every stage: a program that
// names no object.
func (c *checker) window(ctx context.Context, be backend.Backend, detect bool, in *spec.Instance, progs []backend.Program, limit time.Duration) (*stageWindow, error) {
	w := &stageWindow{detect: detect, first: -1, last: -1}
	for j, st := range in.Stages {
		bp, err := c.compile(ctx, be, c.base, st, detect)
		if err != nil {
			return nil, nil // the baseline's own error shows in a full run
		}
		same := bp == progs[j]
		if !same {
			a, aok := bp.(backend.ObjectProgram)
			b, bok := progs[j].(backend.ObjectProgram)
			if !aok || !bok || a.ObjectKey() == "" || b.ObjectKey() == "" {
				return nil, nil
			}
			same = a.ObjectKey() == b.ObjectKey()
		}
		if !same {
			if w.first < 0 {
				w.first = j
			}
			w.last = j
		}
	}
	if w.first < 0 {
		return w, nil
	}
	var err error
	if w.first > 0 {
		if w.before, err = c.baseState(ctx, be, detect, in, w.first, limit); err != nil {
			return nil, err
		}
	}
	if w.last < len(in.Stages)-1 {
		if w.want, err = c.baseState(ctx, be, detect, in, w.last+1, limit); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// run runs the window's stages of in with progs, then the stages after it
// unless the state there is the baseline's: it returns the execution, or
// nil when the final bytes are the baseline's.
func (w *stageWindow) run(ctx context.Context, c *checker, progs []backend.Program, in *spec.Instance, order backend.Order, limit time.Duration) (*Execution, error) {
	key := ""
	if w.before != nil {
		key = fmt.Sprintf("case%d-after%d", in.ID, w.first)
		if w.detect {
			key += "-checking"
		}
	}
	ex, err := ExecuteCase(ctx, progs, in, ExecOptions{Order: order, Timeout: limit, From: w.first, Stages: w.last + 1, State: w.before, StateKey: key})
	if err != nil {
		return nil, err
	}
	w.ran = ex.Stages
	if w.last == len(in.Stages)-1 {
		return ex, nil
	}
	if sameBytes(w.want, ex.Outputs) {
		return nil, nil
	}
	// Other bytes after the changed stages: the rest runs on them.
	rest, err := ExecuteCase(ctx, progs, in, ExecOptions{Order: order, Timeout: limit, From: w.last + 1, State: ex.Outputs})
	if err != nil {
		return nil, err
	}
	rest.Stages = append(ex.Stages, rest.Stages...)
	return rest, nil
}

// baseState returns the baseline's state after the first k stages of case
// in (every device buffer's bytes) on be (its checking build when
// detect), run once per case, build and k and shared by the variants that
// need it.
func (c *checker) baseState(ctx context.Context, be backend.Backend, detect bool, in *spec.Instance, k int, limit time.Duration) (map[string][]byte, error) {
	key := stateKey{in: in, k: k, detect: detect, verify: be != c.run}
	for {
		c.mu.Lock()
		if s, ok := c.states[key]; ok {
			c.mu.Unlock()
			return s, nil
		}
		wait, busy := c.stateBusy[key]
		if !busy {
			if c.stateBusy == nil {
				c.stateBusy = map[stateKey]chan struct{}{}
				c.states = map[stateKey]map[string][]byte{}
			}
			wait = make(chan struct{})
			c.stateBusy[key] = wait
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s, err := func() (map[string][]byte, error) {
		progs, err := c.programs(ctx, be, c.base, in.Stages[:k], detect)
		if err != nil {
			return nil, fmt.Errorf("baseline %w", err)
		}
		ex, err := ExecuteCase(ctx, progs, in, ExecOptions{Order: backend.Order{Kind: "in-order"}, Timeout: limit, Stages: k})
		if err != nil {
			return nil, fmt.Errorf("the baseline's first %d stages of case %s: %w", k, caseName(in), err)
		}
		return ex.Outputs, nil
	}()
	c.mu.Lock()
	if err == nil {
		c.states[key] = s
	}
	close(c.stateBusy[key])
	delete(c.stateBusy, key)
	c.mu.Unlock()
	return s, err
}

type stateKey struct {
	in             *spec.Instance
	k              int
	detect, verify bool
}

// sameBytes reports whether a and b hold the same buffers with the same
// bytes (padding included).
func sameBytes(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}
