// Package cputest gives tests outside backend/cpu one shared cpu backend.
package cputest

import (
	"context"
	"sync"
	"testing"

	"metalab/backend/cpu"
)

var (
	once sync.Once
	back *cpu.Backend
	why  string
)

// Shared returns a cpu backend shared by the tests of the calling test
// binary (one runner process, one compile cache), or skips t with the
// reason the backend cannot run here, such as a missing C++ compiler.
func Shared(t testing.TB) *cpu.Backend {
	t.Helper()
	once.Do(func() {
		b := cpu.New(cpu.Options{})
		if ok, w := b.Available(context.Background()); !ok {
			why = w
			return
		}
		back = b
	})
	if back == nil {
		t.Skipf("cpu backend unavailable: %s", why)
	}
	return back
}
