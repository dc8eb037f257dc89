// Package cputest gives tests outside backend/cpu one shared cpu backend.
package cputest

import (
	"context"
	"sync"
	"testing"

	"metalab/backend/cpu"
	"metalab/internal/testenv"
)

var (
	once sync.Once
	back *cpu.Backend
	why  string
)

// Shared returns a cpu backend shared by the tests of the calling test
// binary (one runner process, one compile cache). Without a C++ compiler
// it stops t through testenv.RequireCXX: a skip with the reason, or a
// failure under CI. A compiler with which the backend cannot be set up
// (no C++17, a runner that does not build) fails t.
func Shared(t testing.TB) *cpu.Backend {
	t.Helper()
	testenv.RequireCXX(t)
	once.Do(func() {
		b := cpu.New(cpu.Options{})
		if ok, w := b.Available(context.Background()); !ok {
			why = w
			return
		}
		back = b
	})
	if back == nil {
		t.Fatalf("cpu backend unavailable although a C++ compiler is present: %s", why)
	}
	return back
}
