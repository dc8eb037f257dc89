package search

import (
	"context"
	"fmt"
	"sync"
	"time"

	"metalab/backend"
	"metalab/check"
)

// The pipeline: with Options.Jobs > 1 a pool of workers checks the
// variants the strategy will ask for next (compile on both backends,
// verification, confirmation: check.Session.Check, which may be called
// from several goroutines) while the main loop times the current one.
// The main loop still takes every variant in the strategy's order, reads
// the pool's result for it (or checks it itself when the pool has not
// started it), records it and times it, so the store, the report and the
// verdicts are those of a sweep with one job. See doc.go, "Pipeline".

// Pipeline states, for progress (Event.Pipeline).
const (
	StateQueued     = "queued"
	StateCompiling  = "compiling"
	StateVerifying  = "verifying"
	StateConfirming = "confirming"
)

// Pipeline says what the pool is doing: variants queued, and being
// compiled, verified and confirmed by its workers; Timing is 1 while a
// sample is timed. Checked counts the checks the pool finished, Rate
// their rate (checks per second of wall time since the pool started,
// over its workers together), Jobs the pool's size.
type Pipeline struct {
	Jobs       int     `json:"jobs"`
	Queued     int     `json:"queued"`
	Compiling  int     `json:"compiling"`
	Verifying  int     `json:"verifying"`
	Confirming int     `json:"confirming"`
	Timing     int     `json:"timing"`
	Checked    int     `json:"checked"`
	Rate       float64 `json:"rate"`
}

func (p Pipeline) String() string {
	return fmt.Sprintf("%d queued, %d compiling, %d verifying, %d confirming, %d timing", p.Queued, p.Compiling, p.Verifying, p.Confirming, p.Timing)
}

type poolJobKey struct{}

// jobOf returns the pool job a context runs for, or nil.
func jobOf(ctx context.Context) *poolJob {
	j, _ := ctx.Value(poolJobKey{}).(*poolJob)
	return j
}

// A poolJob is one variant's check, ahead of the main loop.
type poolJob struct {
	sha     string
	cv      check.Variant
	state   string // a State*, or "" when done
	started bool
	done    chan struct{}
	r       *check.Result
	err     error
	// order is the job's place in the strategy's order; urgent, that the
	// main loop waits for it. The turn goes to the urgent job first, then
	// in order. Guarded by pipeline.mu.
	order  int
	urgent bool
}

// A pipeline is the pool and the lock that keeps samples exclusive.
type pipeline struct {
	session func() *check.Session
	jobs    int
	// pause: the pool's compiles and runs wait while a sample is timed;
	// device: the timing backend is a device (not the cpu emulator), so
	// the pool's runs on it (confirmation) wait while a sample is timed.
	pause, device bool
	// dev is held for writing by every timed sample, for reading by the
	// pool's operations that must not overlap one.
	dev sync.RWMutex
	// held: the main loop holds dev for a whole measurement. Only the
	// main loop reads or writes it.
	held bool
	// The device's confirmation turn is held by one check at a time
	// (turnHolder), from its first confirmation run on the device to the
	// end of that check, so that the checks' confirmations follow one
	// another instead of taking turns run by run. A device backend runs
	// one request at a time and keeps a few runners, one per program:
	// checks taking turns case by case evict one another's runners, and
	// every run starts a runner (a CUDA context) and loads its kernel
	// again. The confirmations are as serial either way; verification
	// and compiles still overlap them. The turn goes to the check the
	// main loop waits for first (urgent), then in the strategy's order,
	// so that the next variant to time is not confirmed last. Guarded by
	// mu; turnCond is signalled when the turn is free or a waiter became
	// urgent.
	turnHolder *poolJob
	turnWait   map[*poolJob]bool
	turnCond   *sync.Cond
	nextOrder  int
	// turnSince is when the holder took the turn; turns and turnHeld
	// count the turns ended and their time held, for the sweep's
	// summary.
	turnSince time.Time
	turns     int
	turnHeld  time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*poolJob // not started, in the strategy's order
	byKey   map[string]*poolJob
	timing  int
	checked int
	start   time.Time
	closed  bool
	notify  func() // progress changed; may be nil
	// onSample, for tests, is told when a sample starts and ends, with
	// the device held.
	onSample func(begin bool)
}

func newPipeline(ctx context.Context, jobs int, pause, device bool, session func() *check.Session) *pipeline {
	p := &pipeline{session: session, jobs: jobs, pause: pause, device: device, byKey: map[string]*poolJob{}}
	p.cond = sync.NewCond(&p.mu)
	p.turnCond = sync.NewCond(&p.mu)
	p.turnWait = map[*poolJob]bool{}
	p.ctx, p.cancel = context.WithCancel(ctx)
	for range jobs {
		p.wg.Add(1)
		go p.worker()
	}
	return p
}

// close stops the workers, abandoning the queue, and waits for them.
func (p *pipeline) close() {
	p.mu.Lock()
	p.closed = true
	p.queue = nil
	p.cond.Broadcast()
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
}

// submit queues the check of cv (sha256 sha) unless it is queued or
// checked already.
func (p *pipeline) submit(sha string, cv check.Variant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.byKey[sha] != nil {
		return
	}
	j := &poolJob{sha: sha, cv: cv, state: StateQueued, done: make(chan struct{}), order: p.nextOrder}
	p.nextOrder++
	if p.start.IsZero() {
		p.start = time.Now()
	}
	p.byKey[sha] = j
	p.queue = append(p.queue, j)
	p.cond.Signal()
}

func (p *pipeline) worker() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.cond.Wait()
		}
		if p.closed {
			p.mu.Unlock()
			return
		}
		j := p.queue[0]
		p.queue = p.queue[1:]
		j.started = true
		p.mu.Unlock()
		p.run(p.ctx, j)
	}
}

// run checks j's variant, marking the context so that the gated backends
// know the pool is at work.
func (p *pipeline) run(ctx context.Context, j *poolJob) {
	j.r, j.err = p.session().Check(context.WithValue(ctx, poolJobKey{}, j), j.cv)
	p.mu.Lock()
	p.endTurn(j)
	j.state = ""
	p.checked++
	p.mu.Unlock()
	close(j.done)
	p.changed()
}

// result returns the check of cv: the pool's, waited for, or when the
// pool has not started it, taken now by the caller. It forgets the job.
func (p *pipeline) result(ctx context.Context, sha string, cv check.Variant) (*check.Result, error) {
	p.mu.Lock()
	j := p.byKey[sha]
	if j == nil {
		j = &poolJob{sha: sha, cv: cv, state: StateQueued, done: make(chan struct{}), order: -1}
		if p.start.IsZero() {
			p.start = time.Now()
		}
		p.byKey[sha] = j
	} else {
		for i, q := range p.queue {
			if q == j {
				p.queue = append(p.queue[:i], p.queue[i+1:]...)
				break
			}
		}
	}
	mine := !j.started
	j.started = true
	j.urgent = true
	p.turnCond.Broadcast()
	p.mu.Unlock()
	if mine {
		p.run(ctx, j)
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	delete(p.byKey, sha)
	p.mu.Unlock()
	return j.r, j.err
}

// takeTurn gives j the device's confirmation turn, waiting for it unless
// j holds it already.
func (p *pipeline) takeTurn(j *poolJob) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.turnHolder == j {
		return
	}
	p.turnWait[j] = true
	for p.turnHolder != nil || p.nextTurn() != j {
		p.turnCond.Wait()
	}
	delete(p.turnWait, j)
	p.turnHolder = j
	p.turnSince = time.Now()
}

// endTurn ends j's confirmation turn, if it holds it. The caller holds mu.
func (p *pipeline) endTurn(j *poolJob) {
	if p.turnHolder == j {
		p.turnHolder = nil
		p.turns++
		p.turnHeld += time.Since(p.turnSince)
		p.turnCond.Broadcast()
	}
}

// turnTime is the number of confirmation turns ended and their time held
// together.
func (p *pipeline) turnTime() (int, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.turns, p.turnHeld
}

// nextTurn is the waiting job the turn goes to next: an urgent one, else
// the first in the strategy's order. The caller holds mu.
func (p *pipeline) nextTurn() *poolJob {
	var best *poolJob
	for j := range p.turnWait {
		if best == nil || j.urgent && !best.urgent || j.urgent == best.urgent && j.order < best.order {
			best = j
		}
	}
	return best
}

func (p *pipeline) setState(j *poolJob, s string) {
	p.mu.Lock()
	changed := j.state != s && j.state != ""
	if changed {
		j.state = s
	}
	p.mu.Unlock()
	if changed {
		p.changed()
	}
}

func (p *pipeline) changed() {
	if p.notify != nil {
		p.notify()
	}
}

// snapshot counts the pool's variants by state.
func (p *pipeline) snapshot() Pipeline {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Pipeline{Jobs: p.jobs, Timing: p.timing, Checked: p.checked}
	for _, j := range p.byKey {
		switch j.state {
		case StateQueued:
			s.Queued++
		case StateCompiling:
			s.Compiling++
		case StateVerifying:
			s.Verifying++
		case StateConfirming:
			s.Confirming++
		}
	}
	if el := time.Since(p.start).Seconds(); !p.start.IsZero() && el > 0 && p.checked > 0 {
		s.Rate = float64(p.checked) / el
	}
	return s
}

// measurement runs f, one attempt of a measurement (its warm-ups and
// pairs), with the device to itself from its first sample to its last:
// the pool's runs on the device wait for the whole measurement, not for
// each sample. Held per sample, every sample would wait for the runs
// queued behind the one before it (a confirmation each, one after
// another on the GPU): on an H200 with 16 jobs confirming, the baseline's
// 9-pair control took 28 s for 18 samples of a few milliseconds.
func (p *pipeline) measurement(f func() error) error {
	if p == nil || p.held {
		return f()
	}
	p.dev.Lock()
	p.held = true
	defer func() {
		p.held = false
		p.dev.Unlock()
	}()
	return f()
}

// sample runs f, one timed sample, with the device to itself: the pool's
// operations that must not overlap a sample wait for it (for the whole
// measurement, when it holds the device).
func (p *pipeline) sample(f func() error) error {
	if p == nil {
		return f()
	}
	if !p.held {
		p.dev.Lock()
	}
	p.mu.Lock()
	p.timing++
	p.mu.Unlock()
	if p.onSample != nil {
		p.onSample(true)
	}
	defer func() {
		if p.onSample != nil {
			p.onSample(false)
		}
		p.mu.Lock()
		p.timing--
		p.mu.Unlock()
		if !p.held {
			p.dev.Unlock()
		}
	}()
	return f()
}

// enter waits, for a pool operation (run on the timing backend when
// timing is set), until no sample is timed if it must not overlap one,
// and returns what ends it.
func (p *pipeline) enter(ctx context.Context, timing bool) func() {
	if jobOf(ctx) == nil || !(p.pause || timing && p.device) {
		return func() {}
	}
	p.dev.RLock()
	return p.dev.RUnlock
}

// gate wraps the session's backends: their compiles and runs for the
// pool report the job's state and wait for samples as enter says.
func (p *pipeline) gate(be backend.Backend, timing bool) backend.Backend {
	if be == nil {
		return nil
	}
	return &gatedBackend{Backend: be, p: p, timing: timing}
}

type gatedBackend struct {
	backend.Backend
	p      *pipeline
	timing bool // the timing backend (confirmation runs on it)
}

// MetalSources forwards the wrapped backend's answer (true when it has
// none), which check asks of the timing backend.
func (b *gatedBackend) MetalSources() bool {
	if m, ok := b.Backend.(interface{ MetalSources() bool }); ok {
		return m.MetalSources()
	}
	return true
}

func (b *gatedBackend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	if j := jobOf(ctx); j != nil {
		b.p.setState(j, StateCompiling)
	}
	release := b.p.enter(ctx, false)
	prog, err := b.Backend.Compile(ctx, src)
	release()
	if err != nil {
		return nil, err
	}
	return &gatedProgram{Program: prog, b: b, checking: src.Check}, nil
}

type gatedProgram struct {
	backend.Program
	b        *gatedBackend
	checking bool // compiled for the checking mode
}

// ObjectKey forwards the wrapped program's (backend.ObjectProgram); ""
// when it names no object.
func (g *gatedProgram) ObjectKey() string {
	if o, ok := g.Program.(backend.ObjectProgram); ok {
		return o.ObjectKey()
	}
	return ""
}

func (g *gatedProgram) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	if j := jobOf(ctx); j != nil {
		st := StateVerifying
		if g.b.timing && !g.checking {
			st = StateConfirming
		}
		g.b.p.setState(j, st)
		if st == StateConfirming && g.b.p.device {
			g.b.p.takeTurn(j)
		}
	}
	release := g.b.p.enter(ctx, g.b.timing)
	defer release()
	return g.Program.Run(ctx, d)
}

// ahead gives the pool the candidates the strategies will ask for, as far
// as they are known before any result: a dry run of the explorer in which
// every candidate passes its checks and is not timed (the step strategies'
// first round, the shardable strategies' every candidate). The step
// strategies tell the pool of each later round themselves (explorer.hint).
func (w *sweep) ahead(ctx context.Context, x *explorer) {
	dry := &explorer{sp: x.sp, set: x.set, shard: x.shard, budget: func() error { return nil }, seen: map[string]Outcome{}}
	dry.eval = func(ctx context.Context, c candidate) (Outcome, error) {
		w.hint(ctx, c)
		return Outcome{Passed: true}, nil
	}
	_ = dry.explore(ctx) // a budget that runs out ends it; the sweep itself says so
}

// hint queues c's check in the pool unless the store holds its verdict or
// the main loop will not check it (a spec at its point that fails, too
// much threadgroup memory by its source).
func (w *sweep) hint(ctx context.Context, c candidate) {
	v := c.v
	if _, complete, err := w.stored(ctx, v.Sha256); err != nil || complete {
		return
	}
	if pt := w.sp.PointOf(v.Sha256); len(pt) > 0 {
		if _, err := w.specAt(pt); err != nil {
			return
		}
	}
	if w.sourceOverLimit(v) != "" {
		return
	}
	w.pipe.submit(v.Sha256, *w.checkVariant(v))
}

// PauseByDefault says whether the pool pauses while a sample is timed
// when the sweep does not say (sweep --pause-during-samples auto): on the
// cpu backend, whose samples run on the host's cores beside the pool's
// compiles, yes; on a GPU, whose samples the host's compiles do not run
// on, no (the pool's runs on the GPU wait for samples whatever this
// says). Measure it with scripts/pool-control.
func PauseByDefault(backendName string) bool { return backendName == "cpu" }
