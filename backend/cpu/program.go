package cpu

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"metalab/backend"
	"metalab/backend/runner"
)

// DefaultTimeout bounds one Run's dispatches when Dispatch.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// loadTimeout bounds the requests that run no kernel code.
const loadTimeout = 30 * time.Second

// maxBufferIndex is the runner's number of buffer slots.
const maxBufferIndex = 127

// A program is one kernel, loaded into a runner process of its own. It
// starts a new runner when its runner died or was stopped.
type program struct {
	b          *Backend
	so, kernel string
	checking   bool   // built for the checking mode
	name       string // the source's name, as #line gives it
	source     []byte // the .metal text, for naming arrays in reports

	tgMem, maxThreads int
	slots             map[int]slotInfo // by slot id
	handle            uint32
	proc              *runner.Proc // guarded by b.runMu; nil when it holds none
	lastUse           uint64       // b.tick at its last use
	closed            bool
}

// slotInfo describes a static threadgroup declaration, for reports.
type slotInfo struct {
	name     string
	size     int
	elemSize int
	extents  []int
}

var _ backend.Program = (*program)(nil)

// ThreadgroupMemory is the static threadgroup memory reported by the
// runner: the kernel's slots laid out by Metal's rule.
func (p *program) ThreadgroupMemory() int {
	p.b.runMu.Lock()
	defer p.b.runMu.Unlock()
	return p.tgMem
}

// MaxThreadsPerThreadgroup is the kernel's limit, at most 1024.
func (p *program) MaxThreadsPerThreadgroup() int {
	p.b.runMu.Lock()
	defer p.b.runMu.Unlock()
	return p.maxThreads
}

// Close releases the program and stops its runner.
func (p *program) Close() error {
	p.b.runMu.Lock()
	p.closed = true
	p.dropRunner()
	p.b.runMu.Unlock()
	return nil
}

// dropRunner stops the program's runner, if any, without waiting for it
// to exit (Backend.Close waits). The caller holds b.runMu.
func (p *program) dropRunner() {
	if r := p.proc; r != nil {
		p.proc = nil
		p.b.closing.Add(1)
		go func() {
			defer p.b.closing.Done()
			r.Close()
		}()
	}
	delete(p.b.live, p)
}

// load makes sure the program has a live runner with its kernel loaded.
// The caller holds p.b.runMu.
func (p *program) load(ctx context.Context) error {
	b := p.b
	b.tick++
	p.lastUse = b.tick
	if p.proc != nil && !p.proc.Dead() {
		return nil
	}
	p.dropRunner()
	b.evict()
	r, err := b.newRunner(ctx)
	if err != nil {
		return err
	}
	var flags uint8
	if p.checking {
		flags |= runner.LoadChecking
	}
	l, err := r.Load(ctx, p.so, p.kernel, flags, loadTimeout)
	if err != nil {
		r.Close()
		return fmt.Errorf("load kernel %s: %w", p.kernel, err)
	}
	p.proc = r
	if b.live == nil {
		b.live = map[*program]struct{}{}
	}
	b.live[p] = struct{}{}
	p.handle, p.tgMem, p.maxThreads = l.Handle, l.TGMem, l.MaxThreads
	p.slots = map[int]slotInfo{}
	for id, s := range l.Slots {
		p.slots[id] = slotInfo{name: s.Name, size: s.Size, elemSize: s.ElemSize, extents: s.Extents}
	}
	return nil
}

// procLog returns the program's runner's stderr tail. The caller holds
// p.b.runMu.
func (p *program) procLog() string {
	if p.proc == nil {
		return ""
	}
	return p.proc.Log()
}

// Run binds d's buffers, dispatches d.Repeat times and reads back every
// device buffer. When the runner breaks the protocol (a kernel that writes
// to the reply channel), it is restarted and the run done once more; a
// second violation is the kernel's Failure of kind Sandbox.
func (p *program) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	order, ok := runner.OrderCodes[d.Order.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown thread order %q (want one of %s)", d.Order.Kind, strings.Join(backend.OrderKinds, ", "))
	}
	if d.Threadgroups.X < 0 || d.Threadgroups.Y < 0 || d.Threadgroups.Z < 0 {
		return nil, fmt.Errorf("run %s: negative grid %v", p.kernel, d.Threadgroups)
	}
	if err := runner.CheckBuffers(p.kernel, d.Buffers, maxBufferIndex); err != nil {
		return nil, err
	}
	p.b.runMu.Lock()
	defer p.b.runMu.Unlock()
	if p.closed {
		return nil, errors.New("run: program is closed")
	}
	return runner.Retry(ctx, func() (*backend.Result, error) { return p.run(ctx, d, order) }, p.procLog)
}

// run is one attempt of Run. The caller holds p.b.runMu.
func (p *program) run(ctx context.Context, d backend.Dispatch, order uint8) (*backend.Result, error) {
	repeat := d.Repeat
	if repeat <= 0 {
		repeat = 1
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if err := p.load(ctx); err != nil {
		return nil, err
	}
	if n := d.Threads.Count(); n <= 0 || n > p.maxThreads || d.Threads.X <= 0 || d.Threads.Y <= 0 || d.Threads.Z <= 0 {
		return nil, fmt.Errorf("run %s: threadgroup %dx%dx%d, want 1..%d threads", p.kernel, d.Threads.X, d.Threads.Y, d.Threads.Z, p.maxThreads)
	}
	r := p.proc
	reply, err := r.Execute(ctx, d.Buffers, runner.Dispatch{
		Handle:  p.handle,
		Groups:  [3]uint32{uint32(d.Threadgroups.X), uint32(d.Threadgroups.Y), uint32(d.Threadgroups.Z)},
		Threads: [3]uint32{uint32(d.Threads.X), uint32(d.Threads.Y), uint32(d.Threads.Z)},
		Repeat:  uint32(repeat), Order: order, Seed: d.Order.Seed,
	}, timeout, loadTimeout)
	if err != nil {
		var se *runner.StepError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("run %s: %w", p.kernel, err)
		}
		var re *runner.Error
		if errors.As(err, &re) {
			return nil, p.failure(re, r.Log())
		}
		var f *backend.Failure
		if errors.As(err, &f) {
			return nil, f
		}
		return nil, fmt.Errorf("run %s: %w", p.kernel, err)
	}
	return &backend.Result{Outputs: reply.Outputs, Times: reply.Times, Total: reply.Total, Findings: p.findings(reply.Findings)}, nil
}

// failure turns an ERR reply to a dispatch into the kernel's Failure.
func (p *program) failure(e *runner.Error, log string) error {
	findings := p.findings(e.Findings)
	switch e.Kind {
	case runner.ErrDeadlock:
		return &backend.Failure{Kind: backend.Deadlock, Msg: e.Msg, Log: log, Findings: findings}
	case runner.ErrBadAccess:
		msg := e.Msg
		for _, f := range findings {
			if f.Fatal {
				msg = "bad access: " + describeFatal(f)
				break
			}
		}
		return &backend.Failure{Kind: backend.BadAccess, Msg: msg, Log: log, Findings: findings}
	}
	return fmt.Errorf("run %s: %w", p.kernel, e)
}
