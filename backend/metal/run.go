package metal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"metalab/backend"
)

// This file is the platform-independent half of a Run: which buffers are
// uploaded, restored on the GPU or read back, what a failed or unfinished
// command buffer means, and when the device is no longer trusted. The
// Metal half (metal_darwin.go) implements device; the tests use a fake.

// A device is what a Run needs of the Metal device.
type device interface {
	// newBuffer returns a shared-storage buffer of n bytes (n >= 1),
	// zero-filled. step names what the buffer is for, for errors.
	newBuffer(n int, step string) (devBuffer, error)
	// restore copies each copy's src into its dst on the GPU, in a command
	// buffer of its own (not the timed one), and waits for it.
	restore(ctx context.Context, copies []bufCopy, timeout time.Duration) (*completion, error)
	// dispatch encodes the plan into one compute encoder of one command
	// buffer (bufs[i] bound at pl.device[i].Index), commits it and waits
	// for it at most timeout. The error is for a call that failed before
	// the command buffer was committed; what happened to a committed one
	// is in the completion.
	dispatch(ctx context.Context, kernel string, pl *plan, bufs []devBuffer) (*completion, error)
}

// A devBuffer is one Metal buffer in shared storage.
type devBuffer interface {
	bytes() []byte // the buffer's contents, which the GPU reads and writes
	release()
}

// A bufCopy is a GPU-side copy of a kept buffer into a run's buffer.
type bufCopy struct {
	src, dst devBuffer
	n        int
}

// A completion is what became of a committed command buffer.
type completion struct {
	// Running: the wait ended (timeout or context) before the command
	// buffer completed. Metal cannot cancel it.
	Running     bool
	Waited      time.Duration // how long the host waited, for Running
	Interrupted error         // for Running: the context's error, when it ended the wait
	// Failed: the command buffer ended in error (MTLCommandBufferStatusError).
	Failed       bool
	Domain, Desc string // its NSError's domain and localized description
	Code         int
	Encoders     string // each encoder's label and MTLCommandEncoderErrorState, one a line, where Metal gave them
	// Start and End are GPUStartTime and GPUEndTime (seconds, host time
	// base), read once the command buffer completed.
	Start, End float64
}

// A residency keeps what outlives a Run on the device: a copy of every
// buffer bound with a Key (backend.Buffer.Key), restored on the GPU in
// later runs instead of uploaded again, and the buffers of the last run,
// reused by the next run that needs buffers of the same lengths. Kept
// copies are evicted, least recently used first, past budget bytes.
//
// A residency also remembers the first GPU fault or unfinished command
// buffer: from then on every run returns that environment error, since
// macOS may refuse the process's later GPU work after a fault, and later
// work queues behind a command buffer that still runs.
type residency struct {
	mu     sync.Mutex // one run at a time: the queue is shared and a timing sample must not overlap another
	budget int        // bytes of kept copies; 0 means no limit
	kept   map[string]*keptCopy
	used   int   // bytes kept
	clock  int64 // advances each run, for LRU
	spare  map[int][]devBuffer
	broken error // the environment error that stopped the device
}

type keptCopy struct {
	buf  devBuffer
	size int
	last int64
}

// runStats says what a run moved, for tests and for `metalab backends`.
type runStats struct {
	Uploaded, Restored, ReadBack int // bytes
	Allocated                    int // buffers created
}

func newResidency(budget int) *residency {
	return &residency{budget: budget, kept: map[string]*keptCopy{}, spare: map[int][]devBuffer{}}
}

// run executes pl on dev: buffers, the restore of kept copies, the timed
// command buffer, the read-back of every device buffer not marked Discard.
func (r *residency) run(ctx context.Context, dev device, kernel string, pl *plan) (*backend.Result, runStats, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var st runStats
	if r.broken != nil {
		return nil, st, r.broken
	}
	r.clock++
	bufs := make([]devBuffer, 0, len(pl.device))
	var copies []bufCopy
	recycle := true
	defer func() {
		r.recycle(bufs, recycle)
	}()
	inRun := map[string]bool{}
	for _, b := range pl.device {
		n := max(len(b.Data), 1)
		buf, err := r.take(dev, n, fmt.Sprintf("allocate buffer %d (%d bytes)", b.Index, n), &st)
		if err != nil {
			return nil, st, fmt.Errorf("run %s: %w", kernel, err)
		}
		bufs = append(bufs, buf)
		if b.Key != "" && len(b.Data) > 0 {
			inRun[b.Key] = true
			if k := r.kept[b.Key]; k != nil && k.size == len(b.Data) {
				k.last = r.clock
				copies = append(copies, bufCopy{src: k.buf, dst: buf, n: len(b.Data)})
				st.Restored += len(b.Data)
				continue
			}
			if err := r.keep(dev, b, &st); err != nil {
				return nil, st, fmt.Errorf("run %s: %w", kernel, err)
			}
		}
		data := buf.bytes()
		n = copy(data, b.Data)
		clear(data[n:])
		st.Uploaded += len(b.Data)
	}
	r.evict(inRun)
	if len(copies) > 0 {
		c, err := dev.restore(ctx, copies, pl.timeout)
		if err != nil {
			return nil, st, fmt.Errorf("run %s: restore kept buffers: %w", kernel, err)
		}
		if err := r.judge(kernel+" (restoring kept buffers)", c, pl.timeout); err != nil {
			recycle = false
			return nil, st, err
		}
	}
	c, err := dev.dispatch(ctx, kernel, pl, bufs)
	if err != nil {
		return nil, st, fmt.Errorf("run %s: %w", kernel, err)
	}
	if err := r.judge(kernel, c, pl.timeout); err != nil {
		recycle = false
		return nil, st, err
	}
	t, ok := gpuDuration(c.Start, c.End)
	if !ok {
		return nil, st, &backend.EnvError{Op: "metal: run " + kernel,
			Err: fmt.Errorf("Metal gave no usable GPU timestamps for a completed command buffer (GPUStartTime %v, GPUEndTime %v, read after it completed); no timing sample can be taken", c.Start, c.End)}
	}
	res := &backend.Result{Outputs: make(map[int][]byte, len(pl.device)), Total: t}
	for i, b := range pl.device {
		if b.Discard {
			continue
		}
		out := make([]byte, len(b.Data))
		copy(out, bufs[i].bytes())
		res.Outputs[b.Index] = out
		st.ReadBack += len(out)
	}
	return res, st, nil
}

// take returns a spare buffer of n bytes or a new one.
func (r *residency) take(dev device, n int, step string, st *runStats) (devBuffer, error) {
	if s := r.spare[n]; len(s) > 0 {
		buf := s[len(s)-1]
		r.spare[n] = s[:len(s)-1]
		return buf, nil
	}
	st.Allocated++
	return dev.newBuffer(n, step)
}

// keep uploads b's bytes into a new kept copy under b.Key, replacing a copy
// of another length.
func (r *residency) keep(dev device, b backend.Buffer, st *runStats) error {
	if old := r.kept[b.Key]; old != nil {
		old.buf.release()
		r.used -= old.size
		delete(r.kept, b.Key)
	}
	buf, err := dev.newBuffer(len(b.Data), fmt.Sprintf("allocate the kept copy of buffer %d (%d bytes)", b.Index, len(b.Data)))
	if err != nil {
		return err
	}
	st.Allocated++
	copy(buf.bytes(), b.Data)
	st.Uploaded += len(b.Data)
	r.kept[b.Key] = &keptCopy{buf: buf, size: len(b.Data), last: r.clock}
	r.used += len(b.Data)
	return nil
}

// evict releases kept copies, least recently used first, until the kept
// bytes are within budget; copies this run uses stay.
func (r *residency) evict(inRun map[string]bool) {
	if r.budget <= 0 || r.used <= r.budget {
		return
	}
	keys := make([]string, 0, len(r.kept))
	for k := range r.kept {
		if !inRun[k] {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := r.kept[keys[i]], r.kept[keys[j]]
		if a.last != b.last {
			return a.last < b.last
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		if r.used <= r.budget {
			break
		}
		c := r.kept[k]
		c.buf.release()
		r.used -= c.size
		delete(r.kept, k)
	}
}

// recycle makes this run's buffers the spares of the next run and releases
// the spares it did not use. After a command buffer that did not finish,
// its buffers are released (it retains them) and never reused.
func (r *residency) recycle(bufs []devBuffer, reuse bool) {
	for _, s := range r.spare {
		for _, b := range s {
			b.release()
		}
	}
	clear(r.spare)
	for _, b := range bufs {
		if reuse {
			n := len(b.bytes())
			r.spare[n] = append(r.spare[n], b)
		} else {
			b.release()
		}
	}
}

// judge turns a command buffer that failed or did not finish into the
// environment error that stops the device, remembering it.
func (r *residency) judge(kernel string, c *completion, timeout time.Duration) error {
	if err := completionError(kernel, c, timeout); err != nil {
		r.broken = err
		if c.Interrupted != nil {
			// The caller gave up (an interrupt): say so, not "environment".
			return fmt.Errorf("run %s: %w (its command buffer still runs)", kernel, c.Interrupted)
		}
		return err
	}
	return nil
}

// completionError is the environment error for a command buffer that did
// not complete (it runs on: Metal cannot cancel it, and all later work on
// the queue would wait behind it) or that ended in error (a GPU fault, the
// GPU's watchdog, a submission macOS refused): nil for one that completed.
// It is never a kernel's Failure: what macOS does to the process after a
// GPU error (it may ignore its later command buffers, "Ignored (for causing
// prior/excessive GPU errors)") would otherwise be charged to the variants
// that run next.
func completionError(kernel string, c *completion, timeout time.Duration) error {
	op := "metal: run " + kernel
	switch {
	case c.Running:
		return &backend.EnvError{Op: op, Err: fmt.Errorf("the command buffer did not complete within %v (the timeout %v) and still runs: Metal cannot cancel it and later work would queue behind it, so this metalab stops here (the results recorded so far stand). Raise the spec's timeout if the kernel is merely slow; %s", c.Waited.Round(time.Millisecond), timeout, rerunHint)}
	case c.Failed:
		kind := cbFailureKind(c.Domain, c.Code)
		var b strings.Builder
		fmt.Fprintf(&b, "%s: the command buffer failed (%s, %s code %d): %s", cbErrorName(c.Domain, c.Code), kind, c.Domain, c.Code, firstLine(c.Desc))
		if c.Encoders != "" {
			fmt.Fprintf(&b, "; encoders: %s", strings.Join(strings.Fields(strings.ReplaceAll(c.Encoders, "\n", " | ")), " "))
		}
		if hint := cbErrorHint(c.Desc, c.Domain, c.Code); hint != "" {
			b.WriteString("; " + hint)
		}
		fmt.Fprintf(&b, ". After a GPU error macOS may refuse this process's later GPU work, so this metalab stops here (the results recorded so far stand); %s", rerunHint)
		return &backend.EnvError{Op: op, Err: errors.New(b.String())}
	}
	return nil
}

// rerunHint says how to learn more about a GPU fault.
const rerunHint = "rerun the one variant with MTL_DEBUG_LAYER=1 MTL_SHADER_VALIDATION=1 in the environment to have Metal name the access"

// cbErrorName names an MTLCommandBufferError code.
func cbErrorName(domain string, code int) string {
	if domain != cbErrorDomain {
		return "GPU error"
	}
	switch code {
	case cbErrorInternal:
		return "internal GPU error"
	case cbErrorTimeout:
		return "GPU watchdog"
	case cbErrorPageFault:
		return "GPU page fault"
	case cbErrorIgnored:
		return "GPU work refused"
	case cbErrorOutOfMemory:
		return "GPU out of memory"
	case cbErrorInvalidResource:
		return "invalid resource"
	case cbErrorDeviceRemoved:
		return "GPU removed"
	case cbErrorStackOverflow:
		return "GPU stack overflow"
	}
	return "GPU error"
}

// cbErrorHint explains the failures a first run on a Mac is likely to see.
func cbErrorHint(desc, domain string, code int) string {
	switch {
	case strings.Contains(desc, "Impacting Interactivity"):
		return "macOS stopped a kernel that kept the GPU from the display: on a Mac driving a display, use smaller cases or fewer dispatches per sample"
	case domain == cbErrorDomain && code == cbErrorIgnored:
		return "macOS ignores this process's GPU work after earlier GPU errors: start metalab again"
	case domain == cbErrorDomain && code == cbErrorTimeout:
		return "the GPU's watchdog stopped a kernel that ran too long"
	}
	return ""
}
