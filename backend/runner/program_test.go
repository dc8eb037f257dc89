package runner

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"metalab/backend"
)

// modePool is fakePool with runners in mode.
func modePool(t *testing.T, mode string, max int) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{Max: max, Start: func(ctx context.Context) (*Proc, error) {
		r, err := Start(Config{Path: exe, Env: []string{"METALAB_FAKE_RUNNER=" + mode}})
		if err != nil {
			return nil, err
		}
		if _, err := r.Call(ctx, MsgHello, nil, 10*time.Second); err != nil {
			r.Close()
			return nil, err
		}
		return r, nil
	}}
	t.Cleanup(p.Close)
	return p
}

var oneGroup = backend.Dispatch{
	Buffers:      []backend.Buffer{{Index: 0, Data: []byte{1, 2, 3, 4}}},
	Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
	Threads:      backend.Dim3{X: 4, Y: 1, Z: 1},
	Timeout:      10 * time.Second,
}

// TestProgramLifecycle: a Program loads its kernel into a runner of its
// own and tells its backend what the LOAD said; it runs, validating the
// dispatch first; after its runner is stopped (evicted) the next run
// starts another and loads again; a closed program does not run.
func TestProgramLifecycle(t *testing.T) {
	pool := modePool(t, "cpu", 1)
	var mu sync.Mutex
	var loads []*Proc
	hooks := ProgramHooks{LoadTimeout: 10 * time.Second, DefaultTimeout: 10 * time.Second, MaxIndex: 30, Orders: true,
		Loaded: func(r *Proc, l *Loaded) {
			if l.MaxThreads != 256 || l.Slots[5].Name != "tile" {
				t.Errorf("LOAD reply %+v", l)
			}
			loads = append(loads, r)
		}}
	p := NewProgram(pool, &mu, "/objects/a.so", "k", hooks)
	q := NewProgram(pool, &mu, "/objects/b.so", "k", hooks)
	mu.Lock()
	if err := p.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Unlock()
	res, err := p.Run(context.Background(), oneGroup)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 12 || len(res.Times) != 2 || res.Outputs[0][0] != 2 {
		t.Errorf("result %+v", res)
	}
	if len(loads) != 1 {
		t.Fatalf("%d loads, want 1", len(loads))
	}
	// q's run evicts p's runner (Max 1); p's next run loads again.
	if _, err := q.Run(context.Background(), oneGroup); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), oneGroup); err != nil {
		t.Fatal(err)
	}
	if len(loads) != 3 || loads[2] == loads[0] {
		t.Errorf("loads %v: want p loaded again into a new runner", loads)
	}
	for _, tt := range []struct {
		d    backend.Dispatch
		want string
	}{
		{backend.Dispatch{Threads: backend.Dim3{X: 1, Y: 1, Z: 1}, Order: backend.Order{Kind: "sideways"}}, "unknown thread order"},
		{backend.Dispatch{Threadgroups: backend.Dim3{X: -1}, Threads: backend.Dim3{X: 1, Y: 1, Z: 1}}, "negative grid"},
		{backend.Dispatch{Threads: backend.Dim3{X: 1, Y: 1, Z: 1}, Buffers: []backend.Buffer{{Index: 31}}}, "outside 0..30"},
		{backend.Dispatch{Threads: backend.Dim3{X: 512, Y: 1, Z: 1}}, "want 1..256 threads"},
	} {
		if _, err := p.Run(context.Background(), tt.d); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Run(%+v) = %v, want an error with %q", tt.d, err, tt.want)
		}
	}
	p.Close()
	if !p.Closed() {
		t.Error("Closed() after Close = false")
	}
	if _, err := p.Run(context.Background(), oneGroup); err == nil {
		t.Error("a closed program ran")
	}
}

// TestProgramHooks: the backend's dispatch hook runs the dispatch, an
// ERR reply goes to its Failure hook, and a kernel that breaks the
// protocol twice is a Sandbox failure after a retry on a fresh runner.
func TestProgramHooks(t *testing.T) {
	var mu sync.Mutex
	ran := 0
	hooks := ProgramHooks{LoadTimeout: 10 * time.Second, DefaultTimeout: 10 * time.Second, MaxIndex: 30,
		Run: func(ctx context.Context, r *Proc, bufs []backend.Buffer, d Dispatch, timeout time.Duration) (*backend.Result, error) {
			ran++
			if d.Order != 0 || d.Seed != 0 {
				t.Errorf("order %d seed %d sent by a backend without orders", d.Order, d.Seed)
			}
			reply, err := r.Execute(ctx, bufs, d, timeout, 10*time.Second)
			if err != nil {
				return nil, err
			}
			return &backend.Result{Total: reply.Total, Findings: []backend.Finding{{Kind: backend.FindRace}}}, nil
		},
		Failure: func(e *Error, log string) error {
			return &backend.Failure{Kind: backend.BadAccess, Msg: "hooked: " + e.Msg}
		}}
	p := NewProgram(modePool(t, "cuda", 2), &mu, "/objects/cuda.so", "k", hooks)
	d := oneGroup
	d.Order = backend.Order{Kind: "shuffle", Seed: 9}
	res, err := p.Run(context.Background(), d)
	if err != nil || res.Total != 99 || len(res.Findings) != 1 || ran != 1 {
		t.Fatalf("Run = %+v, %v (hook ran %d times)", res, err, ran)
	}
	p = NewProgram(modePool(t, "err", 2), &mu, "/objects/a.so", "k", hooks)
	_, err = p.Run(context.Background(), oneGroup)
	var f *backend.Failure
	if !errors.As(err, &f) || f.Msg != "hooked: canary overwritten" {
		t.Errorf("ERR reply: %v, want the Failure hook's", err)
	}
	pool := modePool(t, "badmagic", 2)
	p = NewProgram(pool, &mu, "/objects/a.so", "k", ProgramHooks{LoadTimeout: 10 * time.Second, MaxIndex: 30})
	_, err = p.Run(context.Background(), oneGroup)
	if !errors.As(err, &f) || f.Kind != backend.Sandbox {
		t.Errorf("a protocol broken twice: %v, want a Sandbox failure", err)
	}
	if n := pool.Starts(); n != 2 {
		t.Errorf("%d runners started, want 2 (the retry's on a fresh one)", n)
	}
}

// TestPoolSpareBackground: a pool with Spare starts another runner as a
// lease takes one; with Background, Close still waits for the runners it
// stops.
func TestPoolSpareBackground(t *testing.T) {
	pool := modePool(t, "cpu", 2)
	pool.Spare, pool.Background = true, true
	s := pool.NewLease()
	if _, fresh := acquire(t, s); !fresh {
		t.Fatal("first Acquire not fresh")
	}
	deadline := time.Now().Add(10 * time.Second)
	for pool.Starts() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := pool.Starts(); n != 2 {
		t.Fatalf("%d runners started, want 2 (one spare)", n)
	}
	r := s.Proc()
	s.Drop()
	pool.Close()
	select {
	case <-r.exited:
	default:
		t.Error("Close returned before a runner stopped in the background exited")
	}
}

// TestLoadAheadStartsOutsideLock: LoadAhead starts the program's runner
// (with the pool's Ahead) before it takes the backend's request lock, so
// that another program's requests go on meanwhile; a program that holds a
// live runner takes none, and runs on the one it loaded.
func TestLoadAheadStartsOutsideLock(t *testing.T) {
	pool := modePool(t, "cpu", 4)
	started, release := make(chan struct{}), make(chan struct{})
	pool.Ahead = func(ctx context.Context) (*Proc, error) {
		close(started)
		<-release
		return pool.Start(ctx)
	}
	var mu sync.Mutex
	hooks := ProgramHooks{LoadTimeout: 10 * time.Second, DefaultTimeout: 10 * time.Second, MaxIndex: 30}
	p := NewProgram(pool, &mu, "/objects/a.so", "k", hooks)
	done := make(chan error)
	go func() { done <- p.LoadAhead(context.Background()) }()
	<-started
	if !mu.TryLock() {
		t.Fatal("the request lock is held while LoadAhead's runner starts")
	}
	mu.Unlock()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r := p.Lease().Proc()
	if r == nil || p.Loaded() == nil {
		t.Fatal("LoadAhead left no loaded runner")
	}
	pool.Ahead = func(context.Context) (*Proc, error) {
		t.Error("a runner started for a program that holds a live one")
		return nil, errors.New("unexpected start")
	}
	if err := p.LoadAhead(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), oneGroup); err != nil {
		t.Fatal(err)
	}
	if p.Lease().Proc() != r || pool.Starts() != 1 {
		t.Errorf("runner %v after a run (loaded in %v), %d starts; want the same, 1", p.Lease().Proc(), r, pool.Starts())
	}
}

// TestLoadingRunnerNotEvicted: programs under locks of their own (the cpu
// backend's) load at once; a runner whose kernel is being loaded is not
// the one another program's Acquire stops to make room, even when it is
// the only one (Max 1): that program starts one past Max instead.
func TestLoadingRunnerNotEvicted(t *testing.T) {
	pool := modePool(t, "cpu", 1)
	var mu, qmu sync.Mutex
	q := NewProgram(pool, &qmu, "/objects/b.so", "k", ProgramHooks{LoadTimeout: 10 * time.Second, MaxIndex: 30})
	var during *Proc
	hooks := ProgramHooks{LoadTimeout: 10 * time.Second, DefaultTimeout: 10 * time.Second, MaxIndex: 30,
		Loaded: func(r *Proc, _ *Loaded) {
			// p is still loading: q's first load runs meanwhile.
			qmu.Lock()
			if err := q.Load(context.Background()); err != nil {
				t.Error(err)
			}
			qmu.Unlock()
			during = r
		}}
	p := NewProgram(pool, &mu, "/objects/a.so", "k", hooks)
	mu.Lock()
	err := p.Load(context.Background())
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Lease().Proc(); r == nil || r != during || r.Dead() {
		t.Fatalf("p's runner after q's load: %v (loaded in %v); want the one it loaded, alive", r, during)
	}
	if _, err := p.Run(context.Background(), oneGroup); err != nil {
		t.Fatal(err)
	}
	if n := pool.Starts(); n != 2 {
		t.Errorf("%d runners started, want 2 (p's, and q's past Max)", n)
	}
}
