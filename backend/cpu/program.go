package cpu

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"metalab/backend"
)

// DefaultTimeout bounds one Run's dispatches when Dispatch.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// loadTimeout bounds the requests that run no kernel code.
const loadTimeout = 30 * time.Second

// maxBufferIndex is the runner's number of buffer slots.
const maxBufferIndex = 127

// A program is one kernel loaded into its Backend's runner. It reloads
// itself when the runner was restarted since it last loaded.
type program struct {
	b          *Backend
	so, kernel string
	checking   bool   // built for the checking mode
	name       string // the source's name, as #line gives it
	source     []byte // the .metal text, for naming arrays in reports

	tgMem, maxThreads int
	slots             map[int]slotInfo // by slot id
	handle            uint32
	gen               int // runner generation handle belongs to
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
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.tgMem
}

// MaxThreadsPerThreadgroup is the kernel's limit, at most 1024.
func (p *program) MaxThreadsPerThreadgroup() int {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	return p.maxThreads
}

// Close releases the program; the runner keeps the shared object mapped
// until it restarts.
func (p *program) Close() error {
	p.b.mu.Lock()
	p.closed = true
	p.b.mu.Unlock()
	return nil
}

// load loads the kernel into the current runner. The caller holds p.b.mu.
func (p *program) load(ctx context.Context) error {
	r, err := p.b.runner(ctx)
	if err != nil {
		return err
	}
	if p.gen == p.b.gen {
		return nil
	}
	var e encoder
	e.str(p.so)
	e.str(p.kernel)
	var flags uint8
	if p.checking {
		flags |= loadChecking
	}
	e.u8(flags)
	reply, err := r.call(ctx, msgLoad, e.b, loadTimeout)
	if err != nil {
		return fmt.Errorf("load kernel %s: %w", p.kernel, err)
	}
	d := decoder{b: reply}
	p.handle = d.u32()
	p.tgMem = int(d.u64())
	p.maxThreads = int(d.u32())
	n := int(d.u32())
	p.slots = map[int]slotInfo{}
	for i := 0; i < n && d.err == nil; i++ {
		id := int(d.i32())
		d.u64() // offset
		si := slotInfo{size: int(d.u64()), elemSize: int(d.u64())}
		rank := int(d.u32())
		for k := 0; k < 4; k++ {
			if x := int(d.u64()); k < rank {
				si.extents = append(si.extents, x)
			}
		}
		si.name = d.str()
		p.slots[id] = si
	}
	if d.err != nil {
		return fmt.Errorf("load kernel %s: %w", p.kernel, d.err)
	}
	p.gen = p.b.gen
	return nil
}

// Run binds d's buffers, dispatches d.Repeat times and reads back every
// device buffer. When the runner breaks the protocol (a kernel that writes
// to the reply channel), it is restarted and the run done once more; a
// second violation is the kernel's Failure of kind Sandbox.
func (p *program) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	order, ok := orderCodes[d.Order.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown thread order %q (want one of %s)", d.Order.Kind, strings.Join(backend.OrderKinds, ", "))
	}
	if d.Threadgroups.X < 0 || d.Threadgroups.Y < 0 || d.Threadgroups.Z < 0 {
		return nil, fmt.Errorf("run %s: negative grid %v", p.kernel, d.Threadgroups)
	}
	seen := map[[2]int]bool{}
	for _, buf := range d.Buffers {
		if buf.Index < 0 || buf.Index > maxBufferIndex {
			return nil, fmt.Errorf("run %s: buffer index %d outside 0..%d", p.kernel, buf.Index, maxBufferIndex)
		}
		k := [2]int{buf.Index, 0}
		if buf.Threadgroup {
			k[1] = 1
		}
		if seen[k] {
			return nil, fmt.Errorf("run %s: buffer index %d bound twice", p.kernel, buf.Index)
		}
		seen[k] = true
	}
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	if p.closed {
		return nil, errors.New("run: program is closed")
	}
	res, err := p.run(ctx, d, order)
	if err != nil && errors.Is(err, errProtocol) && ctx.Err() == nil {
		first := err
		res, err = p.run(ctx, d, order)
		if err != nil && errors.Is(err, errProtocol) {
			return nil, &backend.Failure{Kind: backend.Sandbox,
				Msg: "the kernel broke the runner's protocol twice (it wrote to the reply channel?): " + firstLine(first.Error()),
				Log: p.b.procLog()}
		}
	}
	return res, err
}

// run is one attempt of Run. The caller holds p.b.mu.
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
	r := p.b.proc
	r.stderr.reset()
	if _, err := r.call(ctx, msgReset, nil, loadTimeout); err != nil {
		return nil, fmt.Errorf("run %s: %w", p.kernel, err)
	}
	var devices []int
	for _, buf := range d.Buffers {
		var e encoder
		e.u32(uint32(buf.Index))
		if buf.Threadgroup {
			e.u8(bufThreadgroup)
			e.u64(uint64(buf.Size))
			e.u8(0)
		} else {
			e.u8(bufDevice)
			e.u64(uint64(len(buf.Data)))
			e.u8(1)
			e.b = append(e.b, buf.Data...)
			devices = append(devices, buf.Index)
		}
		if _, err := r.call(ctx, msgBuffer, e.b, loadTimeout); err != nil {
			return nil, fmt.Errorf("run %s: bind buffer %d: %w", p.kernel, buf.Index, err)
		}
	}
	var e encoder
	e.u32(p.handle)
	for _, v := range []int{d.Threadgroups.X, d.Threadgroups.Y, d.Threadgroups.Z, d.Threads.X, d.Threads.Y, d.Threads.Z} {
		e.u32(uint32(v))
	}
	e.u32(uint32(repeat))
	e.u8(order)
	e.u64(d.Order.Seed)
	reply, err := r.call(ctx, msgDispatch, e.b, timeout)
	if err != nil {
		var re *runnerError
		if errors.As(err, &re) {
			return nil, p.failure(re, r.stderr.String())
		}
		var f *backend.Failure
		if errors.As(err, &f) {
			return nil, f
		}
		return nil, fmt.Errorf("run %s: %w", p.kernel, err)
	}
	dec := decoder{b: reply}
	n := int(dec.u32())
	res := &backend.Result{Outputs: map[int][]byte{}, Times: make([]time.Duration, 0, n)}
	for i := 0; i < n; i++ {
		res.Times = append(res.Times, time.Duration(dec.u64()))
		res.Total += res.Times[i]
	}
	raw := dec.findings()
	if dec.err != nil {
		return nil, fmt.Errorf("run %s: %w", p.kernel, dec.err)
	}
	res.Findings = p.findings(raw)
	sort.Ints(devices)
	for _, idx := range devices {
		var e encoder
		e.u32(uint32(idx))
		out, err := r.call(ctx, msgRead, e.b, loadTimeout)
		if err != nil {
			return nil, fmt.Errorf("run %s: read buffer %d: %w", p.kernel, idx, err)
		}
		res.Outputs[idx] = out
	}
	return res, nil
}

// failure turns an ERR reply to a dispatch into the kernel's Failure.
func (p *program) failure(e *runnerError, log string) error {
	findings := p.findings(e.findings)
	switch e.kind {
	case errDeadlock:
		return &backend.Failure{Kind: backend.Deadlock, Msg: e.msg, Log: log, Findings: findings}
	case errBadAccess:
		msg := e.msg
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
