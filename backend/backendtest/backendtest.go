// Package backendtest gives the tests that run the bundled kernels
// against their Go references one backend, the one METALAB_TEST_BACKEND
// names: the shared cpu backend by default, cuda on a GPU machine
// (scripts/gpu-tests runs those tests there). A named backend that cannot
// run here fails the test: a run that asked for a GPU cannot pass by
// skipping.
package backendtest

import (
	"context"
	"os"
	"sync"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
	_ "metalab/backend/cuda" // registers "cuda"
)

var (
	mu     sync.Mutex
	chosen = map[string]backend.Backend{}
)

// Name is the backend the tests run on: METALAB_TEST_BACKEND, or "cpu".
func Name() string {
	if n := os.Getenv("METALAB_TEST_BACKEND"); n != "" {
		return n
	}
	return "cpu"
}

// Selected returns the backend Name names, one per test binary.
func Selected(t testing.TB) backend.Backend {
	t.Helper()
	name := Name()
	if name == "cpu" {
		return cputest.Shared(t)
	}
	mu.Lock()
	defer mu.Unlock()
	if b, ok := chosen[name]; ok {
		return b
	}
	b, ok := backend.Lookup(name)
	if !ok {
		t.Fatalf("METALAB_TEST_BACKEND=%s: no such backend", name)
	}
	if ok, why := b.Available(context.Background()); !ok {
		t.Fatalf("METALAB_TEST_BACKEND=%s: the backend cannot run here: %s", name, why)
	}
	chosen[name] = b
	return b
}
