package cpu

import (
	"context"
	"fmt"
	"sync"
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

// A program is one kernel, loaded into a runner process of its own: the
// lifecycle runner.Program shares with the cuda backend (a new runner,
// and the kernel loaded again, when its runner died or was stopped), with
// the checking mode's findings named by the program's source.
type program struct {
	*runner.Program
	b          *Backend
	so, kernel string
	checking   bool   // built for the checking mode
	name       string // the source's name, as #line gives it
	source     []byte // the .metal text, for naming arrays in reports

	lock progLock // the program's request lock (runner.Program.Mu)

	// What the last LOAD said; guarded by lock.
	tgMem, maxThreads int
	slots             map[int]slotInfo // by slot id
	proc              *runner.Proc     // the runner it was loaded into
}

// slotInfo describes a static threadgroup declaration, for reports.
type slotInfo struct {
	name     string
	size     int
	elemSize int
	extents  []int
}

var (
	_ backend.Program       = (*program)(nil)
	_ backend.ObjectProgram = (*program)(nil)
)

// A progLock is a program's request lock: its own mutex, under the
// backend's runMu held for reading, so that programs run at once and Close
// waits for every run.
type progLock struct {
	b  *Backend
	mu sync.Mutex
}

func (l *progLock) Lock()   { l.b.runMu.RLock(); l.mu.Lock() }
func (l *progLock) Unlock() { l.mu.Unlock(); l.b.runMu.RUnlock() }

// newProgram returns the program of kernel in so, not loaded yet.
func (b *Backend) newProgram(so, kernel string, checking bool) *program {
	p := &program{b: b, so: so, kernel: kernel, checking: checking}
	p.lock.b = b
	var flags uint8
	if checking {
		flags |= runner.LoadChecking
	}
	p.Program = runner.NewProgram(b.pool, &p.lock, so, kernel, runner.ProgramHooks{
		LoadFlags: flags, LoadTimeout: loadTimeout, DefaultTimeout: DefaultTimeout,
		MaxIndex: maxBufferIndex, Orders: true,
		Loaded:  p.loaded,
		Run:     p.dispatch,
		Failure: p.failure,
	})
	return p
}

// loaded records a LOAD reply. The caller holds p.lock.
func (p *program) loaded(r *runner.Proc, l *runner.Loaded) {
	p.proc = r
	p.tgMem, p.maxThreads = l.TGMem, l.MaxThreads
	p.slots = map[int]slotInfo{}
	for id, s := range l.Slots {
		p.slots[id] = slotInfo{name: s.Name, size: s.Size, elemSize: s.ElemSize, extents: s.Extents}
	}
}

// ThreadgroupMemory is the static threadgroup memory reported by the
// runner: the kernel's slots laid out by Metal's rule.
func (p *program) ThreadgroupMemory() int {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.tgMem
}

// MaxThreadsPerThreadgroup is the kernel's limit, at most 1024.
func (p *program) MaxThreadsPerThreadgroup() int {
	p.lock.Lock()
	defer p.lock.Unlock()
	return p.maxThreads
}

// Run binds d's buffers, dispatches d.Repeat times in d.Order and reads
// back every device buffer. When the runner breaks the protocol (a kernel
// that writes to the reply channel), it is restarted and the run done
// once more; a second violation is the kernel's Failure of kind Sandbox.
func (p *program) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	return p.Program.Run(ctx, d)
}

// dispatch is one dispatch on the program's runner r, its findings named
// by the program's source. The caller holds p.lock.
func (p *program) dispatch(ctx context.Context, r *runner.Proc, bufs []backend.Buffer, d runner.Dispatch, timeout time.Duration) (*backend.Result, error) {
	reply, err := r.Execute(ctx, bufs, d, timeout, loadTimeout)
	if err != nil {
		return nil, err
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
