package prelude

import (
	"fmt"
	"strings"
	"testing"
)

func TestAtomicsUnderContention(t *testing.T) {
	const threads, iters = 96, 300
	got := strings.TrimSpace(buildRun(t, readTestdata(t, "atomic.cpp"), "", fmt.Sprint(threads), fmt.Sprint(iters)))
	var xor uint32
	var or uint32
	for tid := uint32(0); tid < threads; tid++ {
		xor ^= tid * 2654435761
		or |= 1 << (tid % 32)
	}
	want := fmt.Sprintf("%d %g %d %d %x %d %d %x %d", threads*iters, float32(threads*iters)*0.5, threads-1, -7, or,
		threads*iters, 1000000-2*threads*iters, xor, 42)
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
