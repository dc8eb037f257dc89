package cpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"metalab/backend"
)

// TestYield: after Yield the backend's runners run at nice 10 (through
// nice(1)) and still run kernels; the workers stay one per core.
func TestYield(t *testing.T) {
	if _, err := exec.LookPath("nice"); err != nil {
		t.Skip("no nice(1) on this machine: Yield does nothing here")
	}
	b := newBackend(t, Options{})
	b.Yield()
	if len(b.yieldPrefix()) == 0 {
		t.Fatal("Yield set no prefix, with nice(1) on PATH")
	}
	p := compileTU(t, b, "groups.cpp", "reduce")
	const groups, threads = 2, 64
	in := make([]uint32, groups*threads)
	var want uint32
	for i := range in {
		in[i] = uint32(i)
		if i < threads {
			want += in[i]
		}
	}
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 4*groups), Output: true}},
		Threadgroups: backend.Dim3{X: groups, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
	})
	if got := u32s(res.Outputs[1])[0]; got != want {
		t.Errorf("group 0 sum %d, want %d", got, want)
	}
	// The live runner, a child of this process, at nice 10.
	found := false
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "runner") {
			continue
		}
		fields := strings.Fields(s[i+2:]) // from the state on: ppid is fields[1], nice fields[16]
		if len(fields) < 17 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		found = true
		if fields[16] != "10" {
			t.Errorf("runner %s at nice %s, want 10", f, fields[16])
		}
	}
	if !found {
		t.Error("no runner process of this test found")
	}
	if b.workers() != defaultWorkers() {
		t.Errorf("%d workers after Yield, want %d", b.workers(), defaultWorkers())
	}
}
