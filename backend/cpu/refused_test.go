package cpu

import (
	"context"
	"strings"
	"testing"

	"metalab/backend"
)

// TestRefused: a source the vetting pass refuses is a Failure of kind
// refused, with the first refusal as its message and all of them in its
// log, and nothing is compiled.
func TestRefused(t *testing.T) {
	b := newBackend(t, Options{})
	src := "#include <metal_stdlib>\nusing namespace metal;\n" +
		"kernel void k(device float* o [[buffer(0)]]) {\n  system(\"id > /tmp/pwned\");\n  asm volatile(\"syscall\");\n}\n"
	before := b.compilerRuns.Load()
	_, err := b.Compile(context.Background(), backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k"})
	f := wantFailure(t, err, backend.Refused, "k.metal:4:3: call of system: the C library is not available to Metal kernels")
	if !strings.Contains(f.Log, "k.metal:5:3: inline assembly (asm) is not allowed in a Metal kernel") || strings.Count(f.Log, "\n") != 2 {
		t.Errorf("log %q, want both refusals", f.Log)
	}
	if n := b.compilerRuns.Load() - before; n != 0 {
		t.Errorf("%d compiler runs for a refused source", n)
	}
}
