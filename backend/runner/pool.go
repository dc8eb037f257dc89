package runner

import (
	"context"
	"metalab/backend"
	"sync"
	"sync/atomic"
	"time"
)

// A Pool gives each program of a backend a runner process of its own: no
// two programs (two variants) ever share a process, so nothing one kernel
// does to its runner reaches another kernel's results. At most Max runners
// are kept alive; past that the least recently used program's runner is
// stopped, and started again (and its kernel loaded again) when that
// program next runs; a runner in the middle of a request (SetBusy) is
// never the one stopped. A runner may be started ahead of its use (Prestart),
// while the program it will serve is being compiled, so that its start-up
// (a CUDA context's, say) is not paid in series with the compile.
//
// A Pool's methods are safe for concurrent use; a Lease's are not: its
// backend serialises the requests to its runners.
type Pool struct {
	// Start starts a runner and says hello; it must be set.
	Start func(ctx context.Context) (*Proc, error)
	// Ahead, when set, is what Prestart starts runners with instead of
	// Start: a backend may have a start ahead of use wait for what it
	// must not overlap (a timed run on the same GPU).
	Ahead func(ctx context.Context) (*Proc, error)
	// Max bounds the live runners held by slots (the spare aside); 0
	// means 8.
	Max int
	// Spare keeps a spare: whenever a lease takes a runner, another is
	// started in the background (with Ahead, else Start), so that the
	// next program does not wait for one.
	Spare bool
	// Background stops runners (evicted, dropped) without waiting for
	// them to exit; Close waits for them.
	Background bool

	mu       sync.Mutex
	live     map[*Lease]struct{} // slots holding a runner
	tick     uint64
	spare    *Proc         // a started runner that loaded nothing, or nil
	starting chan struct{} // closed when the spare being started is there, or nil
	epoch    int           // incremented by Close: a spare started before is discarded
	bg       sync.WaitGroup
	starts   atomic.Int64
	startNs  atomic.Int64 // the starts' wall time, summed
	traffic  Traffic      // every request of the pool's runners
}

// A Lease is one program's place in a Pool: the runner only it uses.
type Lease struct {
	pool    *Pool
	proc    *Proc
	lastUse uint64
	busy    bool // a request is in flight on proc: never stopped to make room
	loading bool // proc is fresh and its kernel being loaded (Program.load): not stopped either
}

// SetBusy marks the slot's runner as running a request (or not): a busy
// runner is never the one stopped to make room for another program's, so
// programs that run at once (each under its own lock) do not stop each
// other's runners mid-request. With every live runner busy, a program
// starts one past Max.
func (s *Lease) SetBusy(b bool) {
	s.pool.mu.Lock()
	s.busy = b
	s.pool.mu.Unlock()
}

// NewLease returns a lease holding no runner yet.
func (p *Pool) NewLease() *Lease { return &Lease{pool: p} }

// Starts is the number of runner processes the pool started.
func (p *Pool) Starts() int64 { return p.starts.Load() }

// StartTime is the wall time the pool's runner starts took, summed (those
// made ahead of use too).
func (p *Pool) StartTime() time.Duration { return time.Duration(p.startNs.Load()) }

// Requests is what the requests of the pool's runners cost so far, by
// type; a start's own HELLO is part of the start's time (StartTime), not
// counted here.
func (p *Pool) Requests() []backend.RequestStat { return p.traffic.Stats() }

// Live is the number of slots holding a runner.
func (p *Pool) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.live)
}

// Raise raises Max to n (never lowers it): a caller that will run n
// programs again soon keeps their runners instead of starting them anew.
func (p *Pool) Raise(n int) {
	p.mu.Lock()
	if n > p.max() {
		p.Max = n
	}
	p.mu.Unlock()
}

// Limit is Max as it is now (its default when 0).
func (p *Pool) Limit() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.max()
}

func (p *Pool) max() int {
	if p.Max > 0 {
		return p.Max
	}
	return 8
}

func (p *Pool) start(ctx context.Context, ahead bool) (*Proc, error) {
	start := p.Start
	if ahead && p.Ahead != nil {
		start = p.Ahead
	}
	t0 := time.Now()
	r, err := start(ctx)
	if err == nil {
		p.starts.Add(1)
		p.startNs.Add(int64(time.Since(t0)))
		r.traffic = &p.traffic
	}
	return r, err
}

// Prestart starts a spare runner in the background unless one is there
// or being started.
func (p *Pool) Prestart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if (p.spare != nil && !p.spare.Dead()) || p.starting != nil {
		return
	}
	done := make(chan struct{})
	p.starting = done
	epoch := p.epoch
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		r, err := p.start(context.Background(), true)
		p.mu.Lock()
		p.starting = nil
		if err == nil && p.epoch == epoch && p.spare == nil {
			p.spare, r = r, nil
		}
		p.mu.Unlock()
		close(done)
		if r != nil {
			r.Close()
		}
	}()
}

// Keep offers r, a started runner that loaded nothing, as the spare; it
// is closed when there is one already.
func (p *Pool) Keep(r *Proc) {
	p.mu.Lock()
	if p.spare == nil && !r.Dead() {
		p.spare, r = r, nil
	}
	p.mu.Unlock()
	if r != nil {
		r.Close()
	}
}

// Take returns a started runner that loaded nothing, for the caller to
// keep or close: the spare (waiting for one being started), or a new one.
func (p *Pool) Take(ctx context.Context) (*Proc, error) { return p.fresh(ctx, false) }

// fresh is Take; a runner it starts is started with Ahead when ahead is
// set (the caller holds no lock that a start ahead must not wait under).
func (p *Pool) fresh(ctx context.Context, ahead bool) (*Proc, error) {
	for {
		p.mu.Lock()
		r, wait := p.spare, p.starting
		p.spare = nil
		p.mu.Unlock()
		if r != nil {
			if !r.Dead() {
				return r, nil
			}
			r.Close()
			continue
		}
		if wait == nil {
			return p.start(ctx, ahead)
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// loaded ends the loading mark acquire set.
func (s *Lease) loaded() {
	s.pool.mu.Lock()
	s.loading = false
	s.pool.mu.Unlock()
}

// takeAhead returns a started runner that loaded nothing for a slot
// about to acquire one, or nil when it holds a live one: taken before the
// caller takes its backend's request lock, so that the start (a CUDA
// context's, about 150 ms) does not hold up the backend's other requests.
func (s *Lease) takeAhead(ctx context.Context) (*Proc, error) {
	if s.Live() {
		return nil, nil
	}
	return s.pool.fresh(ctx, true)
}

// Proc returns the slot's runner, or nil.
func (s *Lease) Proc() *Proc { return s.proc }

// Acquire returns the slot's live runner; fresh says it was just started
// (or taken as the spare) and has loaded nothing: the caller loads its
// kernel, and calls Drop if that fails. A runner that died is replaced.
func (s *Lease) Acquire(ctx context.Context) (r *Proc, fresh bool, err error) {
	return s.acquire(ctx, nil, false)
}

// Live reports whether the slot holds a live runner.
func (s *Lease) Live() bool {
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	return s.proc != nil && !s.proc.Dead()
}

// acquire is Acquire; a fresh runner is given (from takeAhead) when not
// nil, and given back to the pool when the slot has a live one. With
// load, a fresh runner is marked loading until loaded is called: another
// program's Acquire, under its own lock, must not stop it before its
// kernel is in.
func (s *Lease) acquire(ctx context.Context, given *Proc, load bool) (r *Proc, fresh bool, err error) {
	p := s.pool
	p.mu.Lock()
	p.tick++
	s.lastUse = p.tick
	if s.proc != nil && !s.proc.Dead() {
		r = s.proc
		p.mu.Unlock()
		if given != nil {
			p.Keep(given)
		}
		return r, false, nil
	}
	old := s.drop()
	var victims []*Proc
	for len(p.live) >= p.max() {
		var v *Lease
		for q := range p.live {
			if !q.busy && !q.loading && (v == nil || q.lastUse < v.lastUse) {
				v = q
			}
		}
		if v == nil {
			break // every live runner is running a request
		}
		victims = append(victims, v.drop())
	}
	p.mu.Unlock()
	for _, v := range append(victims, old) {
		p.stop(v)
	}
	if given != nil && !given.Dead() {
		r = given
	} else {
		if given != nil {
			given.Close()
		}
		if r, err = p.fresh(ctx, false); err != nil {
			return nil, false, err
		}
	}
	if p.Spare {
		p.Prestart()
	}
	p.mu.Lock()
	s.proc = r
	s.loading = load
	if p.live == nil {
		p.live = map[*Lease]struct{}{}
	}
	p.live[s] = struct{}{}
	p.mu.Unlock()
	return r, true, nil
}

// drop detaches the slot's runner and returns it. The caller holds
// s.pool.mu.
func (s *Lease) drop() *Proc {
	r := s.proc
	s.proc = nil
	delete(s.pool.live, s)
	return r
}

// Drop stops the slot's runner, if any; the next Acquire starts another.
func (s *Lease) Drop() {
	s.pool.mu.Lock()
	r := s.drop()
	s.pool.mu.Unlock()
	s.pool.stop(r)
}

// stop stops r (nil: nothing), in the background with p.Background.
func (p *Pool) stop(r *Proc) {
	if r == nil {
		return
	}
	if !p.Background {
		r.Close()
		return
	}
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		r.Close()
	}()
}

// Close stops every runner, the spare's too, and waits for a spare being
// started and for runners being stopped. The pool stays usable.
func (p *Pool) Close() {
	p.mu.Lock()
	var rs []*Proc
	for s := range p.live {
		rs = append(rs, s.drop())
	}
	if p.spare != nil {
		rs = append(rs, p.spare)
		p.spare = nil
	}
	p.epoch++
	p.mu.Unlock()
	for _, r := range rs {
		if r != nil {
			r.Close()
		}
	}
	p.bg.Wait()
}
