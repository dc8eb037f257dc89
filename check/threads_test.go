package check

import (
	"context"
	"sync"
	"testing"

	"metalab/backend"
	"metalab/backend/fake"
)

// A threadsBackend is the fake backend recording the MaxThreads of every
// compile.
type threadsBackend struct {
	*fake.Backend
	mu   sync.Mutex
	seen []int
}

func (b *threadsBackend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	b.mu.Lock()
	b.seen = append(b.seen, src.MaxThreads)
	b.mu.Unlock()
	return b.Backend.Compile(ctx, src)
}

// TestCompileForLargestDispatch holds every compile of a stage to the
// largest threadgroup any listed case dispatches it with (the cases run
// 16 and 32 threads: each program is built for 32), so that a backend
// whose block size depends on how it compiles (cuda) can run them all from
// one build.
func TestCompileForLargestDispatch(t *testing.T) {
	s := setup(t, testSpec, "// fake: copy 0 1\n")
	be := &threadsBackend{Backend: fake.New()}
	rep := run(t, Options{Spec: s, Backend: be, Variants: []Variant{variant("same", "// a comment\n// fake: copy 0 1\n")}})
	if rep.Control.Status != Pass || rep.Variants[0].Status != Pass {
		t.Fatalf("control %s %s, variant %s %s", rep.Control.Status, rep.Control.Msg, rep.Variants[0].Status, rep.Variants[0].Msg)
	}
	if len(be.seen) == 0 {
		t.Fatal("no compile seen")
	}
	for _, n := range be.seen {
		if n != 32 {
			t.Fatalf("compiles for %v threads, want 32 for every one", be.seen)
		}
	}
}
