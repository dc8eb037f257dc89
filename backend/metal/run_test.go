package metal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"metalab/backend"
)

// A fakeDevice stands in for the Metal device: buffers are Go memory, a
// restore copies bytes, and a dispatch runs kernel on the bound buffers
// (by index) unless a completion is scripted.
type fakeDevice struct {
	kernel   func(bufs map[int][]byte)
	next     *completion // the next dispatch's completion instead of running kernel
	restoreC *completion // the next restore's completion
	live     map[*fakeBuffer]bool
	calls    []string // "restore", "dispatch"
}

type fakeBuffer struct {
	dev  *fakeDevice
	data []byte
}

func (b *fakeBuffer) bytes() []byte { return b.data }
func (b *fakeBuffer) release() {
	if !b.dev.live[b] {
		panic("buffer released twice")
	}
	delete(b.dev.live, b)
}

func newFake(kernel func(map[int][]byte)) *fakeDevice {
	return &fakeDevice{kernel: kernel, live: map[*fakeBuffer]bool{}}
}

func (d *fakeDevice) newBuffer(n int, step string) (devBuffer, error) {
	if n < 1 {
		panic("newBuffer of " + step + ": empty")
	}
	b := &fakeBuffer{dev: d, data: make([]byte, n)}
	for i := range b.data {
		b.data[i] = 0xee // Metal zero-fills; garbage here shows a buffer the run did not fill
	}
	d.live[b] = true
	return b, nil
}

func (d *fakeDevice) restore(ctx context.Context, copies []bufCopy, timeout time.Duration) (*completion, error) {
	d.calls = append(d.calls, "restore")
	if c := d.restoreC; c != nil {
		d.restoreC = nil
		return c, nil
	}
	for _, c := range copies {
		copy(c.dst.bytes()[:c.n], c.src.bytes()[:c.n])
	}
	return &completion{Start: 1, End: 1.0001}, nil
}

func (d *fakeDevice) dispatch(ctx context.Context, kernel string, pl *plan, bufs []devBuffer) (*completion, error) {
	d.calls = append(d.calls, "dispatch")
	if c := d.next; c != nil {
		d.next = nil
		return c, nil
	}
	m := map[int][]byte{}
	for i, b := range pl.device {
		m[b.Index] = bufs[i].bytes()
	}
	if d.kernel != nil {
		for range pl.repeat {
			d.kernel(m)
		}
	}
	return &completion{Start: 100, End: 100.000250}, nil
}

// bump adds 1 to every byte of buffer 0 and copies buffer 1 into buffer 2.
func bump(m map[int][]byte) {
	for i := range m[0] {
		m[0][i]++
	}
	if m[2] != nil {
		copy(m[2], m[1])
	}
}

func mustPlan(t *testing.T, d backend.Dispatch) *plan {
	t.Helper()
	if d.Threads == (backend.Dim3{}) {
		d.Threads = backend.Dim3{X: 1, Y: 1, Z: 1}
		d.Threadgroups = backend.Dim3{X: 1, Y: 1, Z: 1}
	}
	p, err := planDispatch("k", d, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResidencyKeepsBuffersByKey(t *testing.T) {
	dev := newFake(bump)
	r := newResidency(0)
	in := []byte{10, 20, 30, 40}
	d := backend.Dispatch{Buffers: []backend.Buffer{
		{Index: 0, Data: in, Output: true, Key: "x"},
		{Index: 1, Data: []byte{7, 7}, Key: "y", Discard: true},
		{Index: 2, Data: []byte{0, 0}, Output: true},
	}}
	res, st, err := r.run(context.Background(), dev, "k", mustPlan(t, d))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Outputs[0]) != string([]byte{11, 21, 31, 41}) || string(res.Outputs[2]) != string([]byte{7, 7}) {
		t.Errorf("first run outputs %v", res.Outputs)
	}
	if _, ok := res.Outputs[1]; ok || st.ReadBack != 6 {
		t.Errorf("the Discard buffer was read back (outputs %v, %d bytes read)", res.Outputs, st.ReadBack)
	}
	if st.Uploaded != 2*6+2 || st.Restored != 0 || res.Total != 250*time.Microsecond {
		t.Errorf("first run: %+v, total %v; want the keyed buffers uploaded to their kept copies and their run buffers (14 bytes), 250µs", st, res.Total)
	}
	for run := 2; run <= 4; run++ {
		dev.calls = nil
		res, st, err = r.run(context.Background(), dev, "k", mustPlan(t, d))
		if err != nil {
			t.Fatal(err)
		}
		// The restore gives Data's bytes, never what the last run wrote.
		if string(res.Outputs[0]) != string([]byte{11, 21, 31, 41}) {
			t.Fatalf("run %d: buffer 0 = %v, want %v: restored from what the last run wrote?", run, res.Outputs[0], []byte{11, 21, 31, 41})
		}
		if st.Uploaded != 2 || st.Restored != 6 || st.Allocated != 0 {
			t.Errorf("run %d: %+v; want only the unkeyed buffer uploaded (2 bytes), 6 restored, no buffer allocated", run, st)
		}
		if strings.Join(dev.calls, ",") != "restore,dispatch" {
			t.Errorf("run %d: device calls %v, want the restore in a command buffer before the timed one", run, dev.calls)
		}
	}
	if in[0] != 10 {
		t.Error("the caller's Data was written")
	}
	// A key bound with another length is a new copy.
	d.Buffers[0].Data = []byte{1, 2, 3}
	res, st, err = r.run(context.Background(), dev, "k", mustPlan(t, d))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Outputs[0]) != string([]byte{2, 3, 4}) || st.Restored != 2 || st.Uploaded != 2+6 {
		t.Errorf("key x at a new length: outputs %v, %+v", res.Outputs[0], st)
	}
	// The fake device holds the two kept copies and the three run buffers.
	if len(dev.live) != 5 {
		t.Errorf("%d buffers alive, want 5 (2 kept, 3 spare)", len(dev.live))
	}
}

func TestResidencyEvictsLeastRecentlyUsed(t *testing.T) {
	dev := newFake(nil)
	r := newResidency(10)
	run := func(key string, n int) runStats {
		t.Helper()
		_, st, err := r.run(context.Background(), dev, "k", mustPlan(t, backend.Dispatch{Buffers: []backend.Buffer{{Index: 0, Data: make([]byte, n), Key: key}}}))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	run("a", 4)
	run("b", 4)
	run("a", 4) // a is now the more recently used
	run("c", 4) // 12 bytes kept: b goes
	if _, ok := r.kept["b"]; ok || r.kept["a"] == nil || r.kept["c"] == nil || r.used != 8 {
		t.Errorf("kept %v (%d bytes); want a and c (8), b evicted", keys(r.kept), r.used)
	}
	if st := run("b", 4); st.Restored != 0 || st.Uploaded != 8 {
		t.Errorf("an evicted key: %+v, want it uploaded again", st)
	}
	if st := run("big", 16); r.kept["big"] == nil || st.Uploaded != 32 {
		t.Errorf("a copy larger than the budget: kept %v, %+v; want it kept for its own run", keys(r.kept), st)
	}
}

func keys(m map[string]*keptCopy) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestResidencyStopsAfterGPUError(t *testing.T) {
	d := backend.Dispatch{Buffers: []backend.Buffer{{Index: 0, Data: []byte{1}, Output: true, Key: "k"}}}
	tests := []struct {
		name    string
		restore bool // the restore's command buffer fails, not the timed one
		c       completion
		want    []string
	}{
		{name: "page fault", c: completion{Failed: true, Domain: cbErrorDomain, Code: 3, Desc: "Caused GPU Address Fault Error (0000000b:kIOGPUCommandBufferCallbackErrorPageFault)",
			Encoders: "metalab k: 1 dispatch(es): faulted\n"},
			want: []string{"GPU page fault", "bad-access", "code 3", "encoders: metalab k: 1 dispatch(es): faulted", "MTL_SHADER_VALIDATION=1", "stops here"}},
		{name: "watchdog", c: completion{Failed: true, Domain: cbErrorDomain, Code: 2, Desc: "Discarded (victim of GPU error/recovery)"},
			want: []string{"GPU watchdog", "timeout", "watchdog stopped"}},
		{name: "display", c: completion{Failed: true, Domain: cbErrorDomain, Code: 2, Desc: "Impacting Interactivity (0000000e:kIOGPUCommandBufferCallbackErrorImpactingInteractivity)"},
			want: []string{"Impacting Interactivity", "driving a display"}},
		{name: "ignored", c: completion{Failed: true, Domain: cbErrorDomain, Code: 4, Desc: "Ignored (for causing prior/excessive GPU errors) (00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)"},
			want: []string{"GPU work refused", "start metalab again"}},
		{name: "still running", c: completion{Running: true, Waited: 1500 * time.Millisecond},
			want: []string{"did not complete within 1.5s", "still runs", "cannot cancel"}},
		{name: "restore fails", restore: true, c: completion{Failed: true, Domain: cbErrorDomain, Code: 1, Desc: "Internal Error"},
			want: []string{"restoring kept buffers", "internal GPU error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := newFake(bump)
			r := newResidency(0)
			if _, _, err := r.run(context.Background(), dev, "k", mustPlan(t, d)); err != nil {
				t.Fatal(err)
			}
			c := tt.c
			if tt.restore {
				dev.restoreC = &c
			} else {
				dev.next = &c
			}
			_, _, err := r.run(context.Background(), dev, "k", mustPlan(t, d))
			var env *backend.EnvError
			var f *backend.Failure
			if !errors.As(err, &env) || errors.As(err, &f) {
				t.Fatalf("error %T %v; want a *backend.EnvError, and no kernel Failure inside", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// Every later run gets the same error without touching the GPU.
			dev.calls = nil
			_, _, again := r.run(context.Background(), dev, "other", mustPlan(t, d))
			if again != err || len(dev.calls) != 0 {
				t.Errorf("the run after: %v (device calls %v); want the first error again and no GPU work", again, dev.calls)
			}
		})
	}
}

func TestResidencyInterrupted(t *testing.T) {
	dev := newFake(nil)
	r := newResidency(0)
	dev.next = &completion{Running: true, Interrupted: context.Canceled}
	d := backend.Dispatch{Buffers: []backend.Buffer{{Index: 0, Data: []byte{1}}}}
	_, _, err := r.run(context.Background(), dev, "k", mustPlan(t, d))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("an interrupted wait: %v, want context.Canceled", err)
	}
	var env *backend.EnvError
	if _, _, err := r.run(context.Background(), dev, "k", mustPlan(t, d)); !errors.As(err, &env) {
		t.Errorf("the run after an interrupted one: %v, want the environment error (its command buffer still runs)", err)
	}
	if len(dev.live) != 0 {
		t.Errorf("%d buffers of the unfinished run still held; they must be released, not reused", len(dev.live))
	}
}

func TestResidencyNoTimestamps(t *testing.T) {
	dev := newFake(nil)
	r := newResidency(0)
	dev.next = &completion{}
	d := backend.Dispatch{Buffers: []backend.Buffer{{Index: 0, Data: []byte{1}}}}
	_, _, err := r.run(context.Background(), dev, "k", mustPlan(t, d))
	var env *backend.EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), "no usable GPU timestamps") {
		t.Errorf("a completed command buffer without timestamps: %v, want an environment error saying so (never a zero sample)", err)
	}
	if res, _, err := r.run(context.Background(), dev, "k", mustPlan(t, d)); err != nil || res.Total <= 0 {
		t.Errorf("the run after: %v, %v; want a timed result (missing timestamps do not stop the device)", res, err)
	}
}

func TestResidencyEmptyBuffer(t *testing.T) {
	dev := newFake(nil)
	r := newResidency(0)
	d := backend.Dispatch{Buffers: []backend.Buffer{{Index: 3, Data: nil, Output: true, Key: "e"}}}
	res, _, err := r.run(context.Background(), dev, "k", mustPlan(t, d))
	if err != nil {
		t.Fatal(err)
	}
	if out, ok := res.Outputs[3]; !ok || len(out) != 0 {
		t.Errorf("an empty buffer: outputs %v, want an empty entry for index 3", res.Outputs)
	}
}
