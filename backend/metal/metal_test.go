package metal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"metalab/backend"
)

var testLimits = limits{maxThreads: 1024, maxDim: [3]int{1024, 1024, 1024}, staticTGMem: 4096, maxTGMem: 32768, maxBufferLen: 1 << 20}

func TestPlanDispatch(t *testing.T) {
	dev := func(i int, n int) backend.Buffer {
		return backend.Buffer{Index: i, Data: make([]byte, n), Output: true}
	}
	tg := func(i, n int) backend.Buffer { return backend.Buffer{Index: i, Size: n, Threadgroup: true} }
	geo := func(d backend.Dispatch) backend.Dispatch {
		if d.Threads == (backend.Dim3{}) {
			d.Threads = backend.Dim3{X: 64, Y: 1, Z: 1}
		}
		if d.Threadgroups == (backend.Dim3{}) {
			d.Threadgroups = backend.Dim3{X: 4, Y: 1, Z: 1}
		}
		return d
	}
	tests := []struct {
		name      string
		d         backend.Dispatch
		lim       limits
		wantErr   string
		wantCrash bool // a *backend.Failure of kind Crash
		check     func(t *testing.T, p *plan)
	}{
		{name: "defaults", d: geo(backend.Dispatch{Buffers: []backend.Buffer{dev(1, 8), tg(0, 100), dev(0, 4), tg(2, 0)}}),
			check: func(t *testing.T, p *plan) {
				if p.repeat != 1 || p.timeout != DefaultTimeout || !p.launch {
					t.Errorf("repeat %d timeout %v launch %v, want 1, %v, true", p.repeat, p.timeout, p.launch, DefaultTimeout)
				}
				if len(p.device) != 2 || p.device[0].Index != 1 || p.device[1].Index != 0 {
					t.Errorf("device buffers %+v, want indices 1 and 0 in dispatch order", p.device)
				}
				if len(p.tg) != 2 || p.tg[0] != (tgArg{0, 112}) || p.tg[1] != (tgArg{2, 16}) || p.dynTG != 128 {
					t.Errorf("threadgroup args %+v (total %d), want {0 112} {2 16} (128): lengths round up to 16", p.tg, p.dynTG)
				}
			}},
		{name: "repeat and timeout", d: geo(backend.Dispatch{Repeat: 8, Timeout: time.Second}),
			check: func(t *testing.T, p *plan) {
				if p.repeat != 8 || p.timeout != time.Second {
					t.Errorf("repeat %d timeout %v", p.repeat, p.timeout)
				}
			}},
		{name: "empty grid launches nothing", d: backend.Dispatch{Threads: backend.Dim3{X: 32, Y: 1, Z: 1}, Threadgroups: backend.Dim3{X: 0, Y: 1, Z: 1}},
			check: func(t *testing.T, p *plan) {
				if p.launch {
					t.Error("launch = true for an empty grid; Metal rejects empty dispatches")
				}
			}},
		{name: "orders are accepted, not honoured", d: geo(backend.Dispatch{Order: backend.Order{Kind: "shuffle", Seed: 3}})},
		{name: "simd-group orders too", d: geo(backend.Dispatch{Order: backend.Order{Kind: "simd-shuffle", Seed: 3}})},
		{name: "unknown order", d: geo(backend.Dispatch{Order: backend.Order{Kind: "random"}}), wantErr: `unknown thread order "random"`},
		{name: "negative grid", d: geo(backend.Dispatch{Threadgroups: backend.Dim3{X: -1, Y: 1, Z: 1}}), wantErr: "negative grid -1x1x1"},
		{name: "empty threadgroup", d: geo(backend.Dispatch{Threads: backend.Dim3{X: 64, Y: 0, Z: 1}}), wantErr: "threadgroup 64x0x1"},
		{name: "index out of range", d: geo(backend.Dispatch{Buffers: []backend.Buffer{dev(31, 4)}}), wantErr: "buffer index 31 outside Metal's 0..30"},
		{name: "threadgroup index out of range", d: geo(backend.Dispatch{Buffers: []backend.Buffer{tg(-1, 4)}}), wantErr: "threadgroup index -1"},
		{name: "bound twice", d: geo(backend.Dispatch{Buffers: []backend.Buffer{dev(3, 4), dev(3, 4)}}), wantErr: "buffer index 3 bound twice"},
		{name: "buffer and threadgroup share an index", d: geo(backend.Dispatch{Buffers: []backend.Buffer{dev(0, 4), tg(0, 4)}})},
		{name: "negative threadgroup size", d: geo(backend.Dispatch{Buffers: []backend.Buffer{tg(0, -4)}}), wantErr: "negative size -4"},
		{name: "buffer too large", d: geo(backend.Dispatch{Buffers: []backend.Buffer{dev(0, 1<<20+1)}}), wantErr: "largest buffer is 1048576 bytes"},
		{name: "more threads than the pipeline allows", d: geo(backend.Dispatch{Threads: backend.Dim3{X: 32, Y: 32, Z: 1}}),
			lim: limits{maxThreads: 512}, wantErr: "exceeds the pipeline's maxTotalThreadsPerThreadgroup 512", wantCrash: true},
		{name: "dimension over the device's", d: geo(backend.Dispatch{Threads: backend.Dim3{X: 1, Y: 1, Z: 128}}),
			lim: limits{maxThreads: 1024, maxDim: [3]int{1024, 1024, 64}}, wantErr: "exceeds the device's 1024x1024x64", wantCrash: true},
		{name: "threadgroup memory over the device's", d: geo(backend.Dispatch{Buffers: []backend.Buffer{tg(0, 28673)}}),
			wantErr: "threadgroup memory 32784 bytes (4096 static + 28688 bound from the host) exceeds the device's 32768", wantCrash: true},
		{name: "threadgroup memory at the limit", d: geo(backend.Dispatch{Buffers: []backend.Buffer{tg(0, 28672)}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := tt.lim
			if lim.maxThreads == 0 {
				lim = testLimits
			}
			p, err := planDispatch("k", tt.d, lim)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tt.check != nil {
					tt.check(t, p)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("planDispatch: %v, want an error containing %q", err, tt.wantErr)
			}
			var f *backend.Failure
			if isFailure := errors.As(err, &f); isFailure != tt.wantCrash || isFailure && f.Kind != backend.Crash {
				t.Errorf("error %T %v: want a Crash failure: %v", err, err, tt.wantCrash)
			}
		})
	}
}

// TestPlanAcceptsEveryOrder: the metal backend accepts every order the
// backend package defines (and honours none).
func TestPlanAcceptsEveryOrder(t *testing.T) {
	for _, k := range append([]string{""}, backend.OrderKinds...) {
		d := backend.Dispatch{Threads: backend.Dim3{X: 1, Y: 1, Z: 1}, Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Order: backend.Order{Kind: k, Seed: 1}}
		if _, err := planDispatch("k", d, testLimits); err != nil {
			t.Errorf("order %q: %v", k, err)
		}
	}
}

func TestPrepareSourceRefusesCheck(t *testing.T) {
	_, err := prepareSource(backend.Source{Name: "k.metal", Text: []byte("kernel void k() {}"), Entry: "k", Check: true})
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.Unavailable || !strings.Contains(f.Msg, "no checking mode") {
		t.Errorf("a source for the checking mode: %v, want an Unavailable failure (the backend contract)", err)
	}
	if text, err := prepareSource(backend.Source{Name: "k.metal", Text: []byte("kernel void k() {}"), Entry: "k"}); err != nil || text != "kernel void k() {}" {
		t.Errorf("an ordinary source: %q, %v", text, err)
	}
}

func TestDarwinkitFailureNamesItsStep(t *testing.T) {
	err := darwinkitFailure("build the pipeline (newComputePipelineStateWithFunction:error:)", "object is nil")
	var env *backend.EnvError
	if !errors.As(err, &env) || err.Error() != "metal backend: build the pipeline (newComputePipelineStateWithFunction:error:): darwinkit call failed: object is nil" {
		t.Errorf("darwinkitFailure = %T %q", err, err)
	}
}

func TestDescribe(t *testing.T) {
	f := deviceFacts{Name: "Apple M5", Found: "MTLCopyAllDevices (first of them; MTLCreateSystemDefaultDevice gave none)", Devices: 1, Unified: true,
		HasFamilies: true, Families: []int{1010, 1009, 1008, 2002, 5002, 5001, 3003}, MaxThreads: [3]int{1024, 1024, 1024},
		MaxTGMem: 32768, MaxBuffer: 1 << 34, WorkingSet: 1 << 35, Language: 3<<16 + 2, OS: "Version 26.1"}
	got := f.describe(true)
	for _, w := range []string{"Apple M5 (unified memory; found by MTLCopyAllDevices", "GPU family Apple10 Mac2 Metal4 Metal3 Common3",
		"threadgroup up to 1024x1024x1024 threads", "32768 B threadgroup memory", "buffers up to 17179869184 B", "kept buffer copies up to 8589934592 B",
		"mathMode=safe", "default MSL 3.2", "Version 26.1"} {
		if !strings.Contains(got, w) {
			t.Errorf("describe = %q, lacks %q", got, w)
		}
	}
	if !strings.Contains(got, "encoder execution status off") {
		t.Errorf("describe = %q, want the encoder status said off", got)
	}
	f.EncoderStatus = true
	if got := f.describe(false); !strings.Contains(got, "encoder execution status recorded") || !strings.Contains(got, "fastMathEnabled=NO") {
		t.Errorf("describe = %q", got)
	}
	if !encoderStatus(func(string) string { return "" }) || encoderStatus(func(k string) string { return map[string]string{"METALAB_METAL_ENCODER_STATUS": "0"}[k] }) {
		t.Error("encoderStatus: want on by default, off for METALAB_METAL_ENCODER_STATUS=0")
	}
	if got := f.short(); got != "Apple M5 (GPU family Apple10 Mac2 Metal4 Metal3 Common3; Version 26.1)" {
		t.Errorf("short = %q", got)
	}
	if got := (deviceFacts{}).families(); !strings.Contains(got, "unknown") {
		t.Errorf("families without supportsFamily: %q", got)
	}
}

func TestGPUDuration(t *testing.T) {
	tests := []struct {
		start, end float64
		want       time.Duration
		ok         bool
	}{
		{1000.0, 1000.000125, 125 * time.Microsecond, true},
		{86400.5, 86400.5, 0, true},
		{0, 0, 0, false},          // no timestamps
		{1000.0, 999.0, 0, false}, // end before start
		{123456.789, 123456.789000003, 3 * time.Nanosecond, true},
	}
	for _, tt := range tests {
		got, ok := gpuDuration(tt.start, tt.end)
		if ok != tt.ok || got != tt.want {
			t.Errorf("gpuDuration(%v, %v) = %v, %v; want %v, %v", tt.start, tt.end, got, ok, tt.want, tt.ok)
		}
	}
}

func TestWaitFor(t *testing.T) {
	var naps []time.Duration
	sleep := func(d time.Duration) { naps = append(naps, d) }
	polls := 0
	err := waitFor(context.Background(), time.Hour, func() bool { polls++; return polls > 10 }, sleep)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{10e3, 20e3, 40e3, 80e3, 160e3, 320e3, 640e3, 1e6, 1e6, 1e6}
	if len(naps) != len(want) {
		t.Fatalf("naps %v, want %v", naps, want)
	}
	for i := range want {
		if naps[i] != want[i] {
			t.Fatalf("naps %v, want %v (doubling from 10µs, capped at 1ms)", naps, want)
		}
	}
	if err := waitFor(context.Background(), 0, func() bool { return false }, sleep); !errors.Is(err, errTimedOut) {
		t.Errorf("waitFor past its deadline: %v, want errTimedOut", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := waitFor(ctx, time.Hour, func() bool { return false }, sleep); !errors.Is(err, context.Canceled) {
		t.Errorf("waitFor with a cancelled context: %v, want context.Canceled", err)
	}
	if err := waitFor(ctx, 0, func() bool { return true }, sleep); err != nil {
		t.Errorf("waitFor when already done: %v, want nil", err)
	}
}

func TestCommandBufferFailureKind(t *testing.T) {
	tests := []struct {
		domain string
		code   int
		want   backend.FailureKind
	}{
		{cbErrorDomain, 2, backend.Timeout},
		{cbErrorDomain, 3, backend.BadAccess},
		{cbErrorDomain, 1, backend.Crash},
		{cbErrorDomain, 8, backend.Crash},
		{"NSCocoaErrorDomain", 2, backend.Crash},
	}
	for _, tt := range tests {
		if got := cbFailureKind(tt.domain, tt.code); got != tt.want {
			t.Errorf("cbFailureKind(%s, %d) = %s, want %s", tt.domain, tt.code, got, tt.want)
		}
	}
}

func TestRegistered(t *testing.T) {
	b, ok := backend.Lookup(Name)
	if !ok {
		t.Fatal("metal is not registered")
	}
	if b.Name() != "metal" {
		t.Errorf("Name() = %q", b.Name())
	}
	ok, why := b.Available(context.Background())
	uok, uwhy := Usable(context.Background())
	if ok != uok || why != uwhy {
		t.Errorf("Available = %v %q, Usable = %v %q; want the same answer", ok, why, uok, uwhy)
	}
	if !ok && why == "" {
		t.Error("unavailable without a reason")
	}
}
