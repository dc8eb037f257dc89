package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"metalab/backend"
)

// A Program is the lifecycle both backends give a compiled kernel: a
// runner process of its own from a Pool (a Lease), the kernel object
// loaded into it (again whenever that runner died or was stopped), runs
// validated, serialised by the backend's lock and retried once on a fresh
// runner when the kernel broke the protocol. What differs between
// backends is in its Hooks.
//
// Every method but Run and Close expects the caller to hold Mu; Run and
// Close take it.
type Program struct {
	Kernel string      // the entry's name in the object's kernel table
	SO     string      // the kernel object
	Mu     sync.Locker // the backend's request lock
	Hooks  ProgramHooks

	lease  *Lease
	loaded *Loaded
	closed bool
}

// ProgramHooks are what a backend adds to the shared lifecycle.
type ProgramHooks struct {
	LoadFlags   uint8         // the LOAD request's flags (LoadChecking)
	LoadTimeout time.Duration // bounds the requests that run no kernel code
	// DefaultTimeout bounds a run's dispatches when Dispatch.Timeout is 0.
	DefaultTimeout time.Duration
	MaxIndex       int  // the largest buffer index
	Orders         bool // Dispatch.Order is sent (else validated only)
	// Loaded is told what the LOAD reply said, when the kernel has been
	// loaded into a fresh runner r (under Mu).
	Loaded func(r *Proc, l *Loaded)
	// Run runs one dispatch on the program's live runner r and makes the
	// Result of its reply; nil means Execute and a Result of the reply's
	// outputs and times. Its errors are those of Execute: an ERR reply
	// goes to Failure.
	Run func(ctx context.Context, r *Proc, bufs []backend.Buffer, d Dispatch, timeout time.Duration) (*backend.Result, error)
	// Failure turns an ERR reply to a dispatch into the kernel's Failure
	// (log is the runner's stderr); nil means an error naming the kernel.
	Failure func(e *Error, log string) error
}

// NewProgram returns the program of kernel in so on pool, not loaded yet.
func NewProgram(pool *Pool, mu sync.Locker, so, kernel string, hooks ProgramHooks) *Program {
	return &Program{Kernel: kernel, SO: so, Mu: mu, Hooks: hooks, lease: pool.NewLease()}
}

// Lease is the program's place in its pool.
func (p *Program) Lease() *Lease { return p.lease }

// Loaded is the last LOAD reply, or nil before the first load.
func (p *Program) Loaded() *Loaded { return p.loaded }

// ObjectKey names the program's compiled object by its content: the
// cache key of its kernel object (the file's name without ".so"), plus
// the kernel it runs. Two programs with the same ObjectKey run the same
// machine code (see backend.ObjectProgram).
func (p *Program) ObjectKey() string {
	return strings.TrimSuffix(filepath.Base(p.SO), ".so") + ":" + p.Kernel
}

// Closed reports whether Close was called.
func (p *Program) Closed() bool { return p.closed }

// Load makes sure the program has a live runner with its kernel loaded.
// The caller holds Mu.
func (p *Program) Load(ctx context.Context) error {
	return p.load(ctx, nil)
}

// LoadAhead is Load for a caller that does not hold Mu (a compile): a
// runner the program needs is taken from the pool, the spare or one
// started with the pool's Ahead, before Mu is taken. Under Mu, a start
// would hold up every other request to the backend's runners, among them
// a sweep's confirmation turn and its measurements.
func (p *Program) LoadAhead(ctx context.Context) error {
	r, err := p.lease.takeAhead(ctx)
	if err != nil {
		return err
	}
	p.Mu.Lock()
	defer p.Mu.Unlock()
	return p.load(ctx, r)
}

// load is Load with a fresh runner given (nil: Acquire's).
func (p *Program) load(ctx context.Context, given *Proc) error {
	r, fresh, err := p.lease.acquire(ctx, given, true)
	if err != nil {
		return err
	}
	if !fresh {
		return nil
	}
	defer p.lease.loaded()
	l, err := r.Load(ctx, p.SO, p.Kernel, p.Hooks.LoadFlags, p.Hooks.LoadTimeout)
	if err != nil {
		p.lease.Drop()
		return fmt.Errorf("load kernel %s: %w", p.Kernel, err)
	}
	p.loaded = l
	if p.Hooks.Loaded != nil {
		p.Hooks.Loaded(r, l)
	}
	return nil
}

// Log returns the program's runner's stderr tail. The caller holds Mu.
func (p *Program) Log() string {
	if r := p.lease.Proc(); r != nil {
		return r.Log()
	}
	return ""
}

// Close releases the program and stops its runner.
func (p *Program) Close() error {
	p.Mu.Lock()
	p.closed = true
	p.lease.Drop()
	p.Mu.Unlock()
	return nil
}

// Run binds d's buffers, dispatches d.Repeat times and reads back every
// device buffer, on the program's runner (started and loaded again if it
// died). A runner that broke the protocol is restarted and the run done
// once more; a second violation is the kernel's Failure of kind Sandbox.
func (p *Program) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	order, ok := OrderCodes[d.Order.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown thread order %q (want one of %s)", d.Order.Kind, strings.Join(backend.OrderKinds, ", "))
	}
	if !p.Hooks.Orders {
		order = 0
	}
	if d.Threadgroups.X < 0 || d.Threadgroups.Y < 0 || d.Threadgroups.Z < 0 {
		return nil, fmt.Errorf("run %s: negative grid %v", p.Kernel, d.Threadgroups)
	}
	if err := CheckBuffers(p.Kernel, d.Buffers, p.Hooks.MaxIndex); err != nil {
		return nil, err
	}
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if p.closed {
		return nil, errors.New("run: program is closed")
	}
	p.lease.SetBusy(true)
	defer p.lease.SetBusy(false)
	return Retry(ctx, func() (*backend.Result, error) { return p.run(ctx, d, order) }, p.Log)
}

// run is one attempt of Run. The caller holds Mu.
func (p *Program) run(ctx context.Context, d backend.Dispatch, order uint8) (*backend.Result, error) {
	repeat := d.Repeat
	if repeat <= 0 {
		repeat = 1
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = p.Hooks.DefaultTimeout
	}
	if err := p.Load(ctx); err != nil {
		return nil, err
	}
	max := p.loaded.MaxThreads
	if n := d.Threads.Count(); n <= 0 || n > max || d.Threads.X <= 0 || d.Threads.Y <= 0 || d.Threads.Z <= 0 {
		return nil, fmt.Errorf("run %s: threadgroup %dx%dx%d, want 1..%d threads", p.Kernel, d.Threads.X, d.Threads.Y, d.Threads.Z, max)
	}
	r := p.lease.Proc()
	seed := d.Order.Seed
	if !p.Hooks.Orders {
		seed = 0
	}
	rd := Dispatch{
		Handle:  p.loaded.Handle,
		Groups:  [3]uint32{uint32(d.Threadgroups.X), uint32(d.Threadgroups.Y), uint32(d.Threadgroups.Z)},
		Threads: [3]uint32{uint32(d.Threads.X), uint32(d.Threads.Y), uint32(d.Threads.Z)},
		Repeat:  uint32(repeat), Order: order, Seed: seed,
	}
	var res *backend.Result
	var err error
	if p.Hooks.Run != nil {
		res, err = p.Hooks.Run(ctx, r, d.Buffers, rd, timeout)
	} else {
		var reply *Reply
		if reply, err = r.Execute(ctx, d.Buffers, rd, timeout, p.Hooks.LoadTimeout); err == nil {
			res = &backend.Result{Outputs: reply.Outputs, Times: reply.Times, Total: reply.Total}
		}
	}
	if err == nil {
		return res, nil
	}
	var se *StepError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("run %s: %w", p.Kernel, err)
	}
	var re *Error
	if errors.As(err, &re) {
		if p.Hooks.Failure != nil {
			return nil, p.Hooks.Failure(re, r.Log())
		}
		return nil, fmt.Errorf("run %s: %w", p.Kernel, re)
	}
	var f *backend.Failure
	if errors.As(err, &f) {
		return nil, f
	}
	return nil, fmt.Errorf("run %s: %w", p.Kernel, err)
}
