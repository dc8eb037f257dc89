package search

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"metalab/backend"
	"metalab/backend/fake"
	"metalab/search/store"
)

// storeRows lists every row of the store at path as JSON, without what
// differs between runs of one plan: when a row was written, sample
// durations, measurement ids and the timings a report masks.
func storeRows(t testing.TB, path string) []string {
	t.Helper()
	st, err := store.OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []string
	for _, stage := range store.Stages {
		rows, err := st.Results(context.Background(), store.Query{Stage: stage})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			b, _ = json.Marshal(unstamped(masked(m)))
			out = append(out, string(b))
		}
	}
	slices.Sort(out)
	return out
}

// unstamped drops the store's timestamps, sample durations and
// measurement ids.
func unstamped(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "created", "taken", "ns", "measurement":
				continue
			}
			out[k] = unstamped(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unstamped(e)
		}
		return out
	}
	return v
}

// TestPipelineSameResults runs each strategy with one job and with a
// pool of four and requires the same verdicts, the same report (timings
// aside) and the same store rows (their times aside).
func TestPipelineSameResults(t *testing.T) {
	for _, strategy := range []string{"ablate", "stack", "loo", "greedy", "beam", "ablate,grid", "random"} {
		t.Run(strategy, func(t *testing.T) {
			fx := newFixture(t)
			if strings.Contains(strategy, "grid") || strategy == "random" {
				fx, _ = tuneFixture(t)
			}
			edit := func(po *PlanOptions) {
				po.Search.Strategy = strategy
				switch strategy {
				case "ablate,grid":
					po.Search.Strategy, po.Search.Tune = "ablate", "grid"
				case "random":
					po.Search.Ops, po.Search.Strategy, po.Search.Tune, po.Search.Samples = nil, "", "random", 3
				}
				if strategy == "loo" || strategy == "stack" {
					po.Search.Choices = "first"
				}
				if strategy == "beam" {
					po.Search.Beam = 2
				}
			}
			one := filepath.Join(t.TempDir(), "one")
			r1 := mustRun(t, fx.options(t, one, edit))
			four := filepath.Join(t.TempDir(), "four")
			opts := fx.options(t, four, edit)
			opts.Jobs = 4
			var mu sync.Mutex
			pooled := 0
			opts.Progress = func(e Event) {
				mu.Lock()
				defer mu.Unlock()
				if e.Pipeline == nil || e.Pipeline.Jobs != 4 {
					t.Errorf("event %+v without the pool's state", e)
				}
				pooled = max(pooled, e.Pipeline.Checked)
			}
			r4 := mustRun(t, opts)
			if r1.Variants == 0 || r1.Variants != r4.Variants || r1.Failed != r4.Failed || r1.Explored != r4.Explored || r1.Confirmed != r4.Confirmed || len(r1.Retained) != len(r4.Retained) {
				t.Errorf("one job: %+v\nfour jobs: %+v", r1, r4)
			}
			if pooled == 0 {
				t.Error("the pool checked no variant")
			}
			v1, v4 := verdicts(t, readReport(t, one)), verdicts(t, readReport(t, four))
			if len(v1) == 0 || !reflect.DeepEqual(v1, v4) {
				t.Errorf("verdicts differ: one job %v, four jobs %v", v1, v4)
			}
			if got, want := masked(readReport(t, four)), masked(readReport(t, one)); !reflect.DeepEqual(got, want) {
				t.Errorf("the reports differ (timings aside):\nfour jobs %v\none job %v", got, want)
			}
			a, b := storeRows(t, filepath.Join(one, StoreFile)), storeRows(t, filepath.Join(four, StoreFile))
			if !slices.Equal(a, b) {
				t.Errorf("the stores differ:\none job\n%s\nfour jobs\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
			}
		})
	}
}

// TestPipelineSamplesExclusive requires that no run of the pool on the
// timing backend (a device: the fake backend; confirmation and, without a
// verification backend, verification) and, with the pause, no compile of
// the pool either, overlaps a timed sample.
func TestPipelineSamplesExclusive(t *testing.T) {
	for _, pause := range []bool{false, true} {
		t.Run(fmt.Sprint("pause=", pause), func(t *testing.T) {
			fx := newFixture(t, "sleep 5ms")
			opts := fx.options(t, filepath.Join(t.TempDir(), "out"), nil)
			// Two workers: the third and fourth variants are checked while
			// the first two are timed.
			opts.Jobs = 2
			opts.PauseDuringSamples = pause
			probe := &probeBackend{Backend: fake.New(), compileSleep: 2 * time.Millisecond}
			opts.Backend = probe
			samples := 0
			opts.onSample = func(begin bool) {
				probe.sampling.Store(begin)
				if begin {
					samples++
				}
			}
			res := mustRun(t, opts)
			if res.Explored == 0 || samples == 0 {
				t.Fatalf("nothing timed: %+v", res)
			}
			if n := probe.runOverlap.Load(); n > 0 {
				t.Errorf("%d runs of the pool overlapped a sample", n)
			}
			if n := probe.compileOverlap.Load(); pause && n > 0 {
				t.Errorf("%d compiles of the pool overlapped a sample with the pool paused", n)
			}
			if probe.poolCompiles.Load() == 0 {
				t.Error("the pool compiled nothing")
			}
		})
	}
}

// TestPipelineConfirmationsInTurn requires that the pool's checks confirm
// on a device one after another, each check's runs together: checks
// taking turns run by run would evict one another's runners on a GPU,
// and start one for every run.
func TestPipelineConfirmationsInTurn(t *testing.T) {
	fx := newFixture(t, "sleep 1ms")
	opts := fx.options(t, filepath.Join(t.TempDir(), "out"), nil)
	opts.Jobs = 4
	probe := &probeBackend{Backend: fake.New(), runSleep: time.Millisecond}
	opts.Backend = probe
	res := mustRun(t, opts)
	if res.Explored == 0 {
		t.Fatalf("nothing timed: %+v", res)
	}
	probe.mu.Lock()
	defer probe.mu.Unlock()
	ended := map[*poolJob]bool{}
	var last *poolJob
	jobs := map[*poolJob]bool{}
	for _, j := range probe.confirms {
		jobs[j] = true
		if j != last {
			if ended[j] {
				t.Fatalf("a check's confirmation runs were interleaved with another's: %d runs by %d checks", len(probe.confirms), len(jobs))
			}
			if last != nil {
				ended[last] = true
			}
			last = j
		}
	}
	if len(jobs) < 2 {
		t.Fatalf("%d checks of the pool confirmed: the test shows nothing", len(jobs))
	}
}

// A probeBackend is the fake backend with a compile cost (a sleep),
// counting the pool's compiles and runs made while a sample was timed,
// and listing the pool's plain (confirmation) runs by job.
type probeBackend struct {
	backend.Backend
	compileSleep, runSleep     time.Duration
	sampling                   atomic.Bool
	runOverlap, compileOverlap atomic.Int64
	poolCompiles               atomic.Int64
	mu                         sync.Mutex
	confirms                   []*poolJob
}

func (b *probeBackend) MetalSources() bool { return false }

func (b *probeBackend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	if jobOf(ctx) != nil {
		b.poolCompiles.Add(1)
		if b.sampling.Load() {
			b.compileOverlap.Add(1)
		}
	}
	time.Sleep(b.compileSleep)
	if jobOf(ctx) != nil && b.sampling.Load() {
		b.compileOverlap.Add(1)
	}
	p, err := b.Backend.Compile(ctx, src)
	if err != nil {
		return nil, err
	}
	return &probeProgram{Program: p, b: b, checking: src.Check}, nil
}

type probeProgram struct {
	backend.Program
	b        *probeBackend
	checking bool
}

func (p *probeProgram) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	if jobOf(ctx) != nil && p.b.sampling.Load() {
		p.b.runOverlap.Add(1)
	}
	if j := jobOf(ctx); j != nil && !p.checking {
		p.b.mu.Lock()
		p.b.confirms = append(p.b.confirms, j)
		p.b.mu.Unlock()
	}
	time.Sleep(p.b.runSleep)
	r, err := p.Program.Run(ctx, d)
	if jobOf(ctx) != nil && p.b.sampling.Load() {
		p.b.runOverlap.Add(1)
	}
	return r, err
}

// TestPipelineGate holds a sample and requires that the pool's run on a
// device timing backend, and with the pause its compile too, waits for
// the sample's end, while a compile without the pause and the main
// loop's own runs do not.
func TestPipelineGate(t *testing.T) {
	src := backend.Source{Name: "k.metal", Text: []byte("// fake: copy 0 1\n"), Entry: "k"}
	d := backend.Dispatch{Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 1, Y: 1, Z: 1}, Buffers: []backend.Buffer{{Index: 0, Data: []byte{1}}, {Index: 1, Data: []byte{0}, Output: true}}}
	for _, pause := range []bool{false, true} {
		p := newPipeline(context.Background(), 1, pause, true, nil)
		be := p.gate(fake.New(), true)
		pool := context.WithValue(context.Background(), poolJobKey{}, &poolJob{state: StateQueued})
		main, err := be.Compile(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		// waits reports whether f is still waiting 50ms after it started.
		waits := func(f func()) (func() bool, chan struct{}) {
			done := make(chan struct{})
			go func() { f(); close(done) }()
			return func() bool {
				select {
				case <-done:
					return false
				case <-time.After(50 * time.Millisecond):
					return true
				}
			}, done
		}
		var runWaits, compileWaits bool
		var runDone, compileDone chan struct{}
		err = p.sample(func() error {
			if _, err := main.Run(context.Background(), d); err != nil {
				return err
			}
			var w func() bool
			w, runDone = waits(func() { main.Run(pool, d) })
			runWaits = w()
			w, compileDone = waits(func() { be.Compile(pool, src) })
			compileWaits = w()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		<-runDone
		<-compileDone
		if !runWaits {
			t.Errorf("pause=%v: the pool's run on the device did not wait for the sample", pause)
		}
		if compileWaits != pause {
			t.Errorf("pause=%v: the pool's compile waited for the sample: %v", pause, compileWaits)
		}
		p.close()
	}
}

// TestConfirmationTurnOrder: the device's confirmation turn goes to the
// check the main loop waits for first, then in the strategy's order, not
// to whichever asked first.
func TestConfirmationTurnOrder(t *testing.T) {
	p := newPipeline(context.Background(), 0, false, true, nil)
	defer p.close()
	job := func(order int) *poolJob { return &poolJob{order: order, done: make(chan struct{})} }
	holder, late, early, wanted := job(0), job(5), job(2), job(9)
	p.takeTurn(holder)
	got := make(chan *poolJob, 3)
	wait := func(j *poolJob) {
		go func() {
			p.takeTurn(j)
			got <- j
		}()
	}
	waiting := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			p.mu.Lock()
			w := len(p.turnWait)
			p.mu.Unlock()
			if w == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d checks wait for the turn, want %d", w, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	release := func(j *poolJob) {
		p.mu.Lock()
		p.endTurn(j)
		p.mu.Unlock()
	}
	wait(late)
	wait(early)
	wait(wanted)
	waiting(3)
	p.mu.Lock()
	wanted.urgent = true // the main loop waits for it
	p.mu.Unlock()
	var order []int
	cur := holder
	for range 3 {
		release(cur)
		cur = <-got
		order = append(order, cur.order)
	}
	release(cur)
	if want := []int{9, 2, 5}; !slices.Equal(order, want) {
		t.Errorf("the turn went to the checks of order %v, want %v (the urgent one, then in order)", order, want)
	}
}
