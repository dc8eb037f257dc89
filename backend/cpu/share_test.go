package cpu

import (
	"runtime"
	"testing"
)

// TestShareCores: runners started after ShareCores(n) get their share of
// the cores (at least one worker), unless Options.Workers says otherwise.
func TestShareCores(t *testing.T) {
	b := New(Options{})
	if b.workers() != runtime.NumCPU() {
		t.Errorf("default workers %d, want %d", b.workers(), runtime.NumCPU())
	}
	b.ShareCores(1)
	if b.workers() != runtime.NumCPU() {
		t.Errorf("ShareCores(1): %d workers, want every core", b.workers())
	}
	b.ShareCores(2 * runtime.NumCPU())
	if b.workers() != 1 {
		t.Errorf("ShareCores(2 × cores): %d workers, want 1", b.workers())
	}
	set := New(Options{Workers: 3})
	set.ShareCores(64)
	if set.workers() != 3 {
		t.Errorf("Options.Workers 3 with ShareCores(64): %d workers", set.workers())
	}
}
