package runner

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"metalab/backend"
)

// The test binary doubles as a fake runner: with METALAB_FAKE_RUNNER set
// to a mode it speaks the protocol on stdin and stdout (see fakeRunner).
func TestMain(m *testing.M) {
	if mode := os.Getenv("METALAB_FAKE_RUNNER"); mode != "" {
		os.Exit(fakeRunner(mode))
	}
	os.Exit(m.Run())
}

// fakeRunner answers requests as a runner would, the DISPATCH as mode
// says: "cpu" (two timed dispatches), "cuda" (a total after the
// findings), "err" (an ERR reply with a finding), "badmagic" (a reply the
// protocol forbids), "exit70", "exit71", "exit74" (dying with that status
// after a report line), "hang" (never answering); "evict" is "cpu" whose
// kept copies are always gone.
func fakeRunner(mode string) int {
	in := bufio.NewReader(os.Stdin)
	out := os.Stdout
	bufs := map[uint32][]byte{}
	kept := map[string][]byte{}
	reply := func(seq uint32, typ byte, payload []byte) {
		var h [13]byte
		binary.LittleEndian.PutUint32(h[0:], ReplyMagic)
		binary.LittleEndian.PutUint32(h[4:], seq)
		binary.LittleEndian.PutUint32(h[8:], uint32(len(payload)))
		h[12] = typ
		out.Write(append(h[:], payload...))
	}
	for {
		var h [13]byte
		if _, err := io.ReadFull(in, h[:]); err != nil {
			return 0
		}
		seq, n := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
		payload := make([]byte, n)
		if _, err := io.ReadFull(in, payload); err != nil {
			return 72
		}
		d := Decoder{B: payload}
		var e Encoder
		switch h[12] {
		case MsgHello:
			e.Str("fake runner " + mode)
			reply(seq, MsgOK, e.B)
		case MsgLoad:
			so, kernel := d.Str(), d.Str()
			e.U32(3)
			e.U64(64)
			e.U32(256)
			e.U32(1)
			e.U32(5) // slot id
			e.U64(0)
			e.U64(64)
			e.U64(4)
			e.U32(2)
			for _, x := range []uint64{4, 4, 0, 0} {
				e.U64(x)
			}
			e.Str("tile")
			if strings.HasSuffix(so, "cuda.so") {
				e.Str("registers 12 for " + kernel)
				e.U64(58)
			}
			reply(seq, MsgOK, e.B)
		case MsgReset:
			bufs = map[uint32][]byte{}
			reply(seq, MsgOK, nil)
		case MsgBuffer:
			idx, kind, size, source := d.U32(), d.U8(), d.U64(), d.U8()
			var key string
			if source == SourceKeep || source == SourceRestore {
				key = d.Str()
			}
			switch {
			case kind != BufDevice:
			case source == SourceRestore && (mode == "evict" || kept[key] == nil):
				e.U8(ErrNotKept)
				e.Str("no copy kept under " + key)
				reply(seq, MsgErr, e.B)
				continue
			case source == SourceRestore:
				bufs[idx] = append([]byte(nil), kept[key]...)
			case source == SourceData || source == SourceKeep:
				bufs[idx] = append([]byte(nil), d.B[:size]...)
				if source == SourceKeep {
					kept[key] = append([]byte(nil), bufs[idx]...)
				}
			}
			reply(seq, MsgOK, nil)
		case MsgRead:
			b := bufs[d.U32()]
			for i := range b {
				b[i]++
			}
			reply(seq, MsgOK, b)
		case MsgDispatch:
			switch mode {
			case "cpu", "evict":
				e.U32(2)
				e.U64(5)
				e.U64(7)
				e.U32(0)
				reply(seq, MsgOK, e.B)
			case "cuda":
				e.U32(0)
				e.U32(0)
				e.U64(99)
				reply(seq, MsgOK, e.B)
			case "err":
				e.U8(ErrBadAccess)
				e.Str("canary overwritten")
				e.U32(1)
				e.U8(3) // bounds
				e.U8(1) // device
				e.U8(1) // fatal
				e.U8(0)
				e.U32(2) // buffer
				e.Str("")
				e.U64(uint64(16))
				e.U32(4)
				e.U32(1)
				for a := 0; a < 2; a++ {
					e.U8(uint8(1 - a))
					e.U8(1)
					e.U8(0)
					e.U8(0)
					e.U32(1)
					e.U32(0)
					e.U32(0)
					e.U32(33)
					e.U64(0)
					e.U32(12)
					e.U32(3)
					e.Str("k.metal")
				}
				e.Str("note")
				reply(seq, MsgErr, e.B)
			case "badmagic":
				out.Write(make([]byte, 13))
			case "exit70", "exit71", "exit74":
				line := map[string]string{"exit70": "bad access: kernel k: illegal address", "exit71": "crash: kernel k: trap", "exit74": "timeout: kernel k: watchdog"}[mode]
				fmt.Fprintln(os.Stderr, line)
				return map[string]int{"exit70": ExitBadAccess, "exit71": ExitCrash, "exit74": ExitTimeout}[mode]
			case "segv", "overflow":
				line := map[string]string{
					"segv":     "crash: SIGSEGV at address 0x10000 in thread 3 of threadgroup (0,0,0)",
					"overflow": "crash: SIGSEGV at address 0x7f0000001000 (stack overflow) in thread 3 of threadgroup (0,0,0)",
				}[mode]
				fmt.Fprintln(os.Stderr, line)
				return ExitCrash
			case "sigsys":
				// Go's runtime catches SIGSYS: die by it from a shell instead.
				syscall.Exec("/bin/sh", []string{"sh", "-c", "kill -SYS $$"}, nil)
				return 1
			case "hang":
				time.Sleep(time.Hour)
			}
		default:
			e.U8(ErrUsage)
			e.Str("unknown request")
			reply(seq, MsgErr, e.B)
		}
	}
}

// TestNoScratchLeft checks that starting and ending runners leaves
// nothing in TMPDIR, however they end.
func TestNoScratchLeft(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := startFake(t, "cpu")
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("a running runner has %d entries in TMPDIR, want none: its working directory is removed once it is in it", len(ents))
	}
	p.Close()
	q := startFake(t, "exit71")
	_, _ = q.Execute(context.Background(), testBufs, Dispatch{}, time.Minute, time.Minute)
	q.Kill()
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in TMPDIR: %v", names)
	}
}

// startFake starts the test binary as a fake runner in mode.
func startFake(t *testing.T, mode string) *Proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Config{Path: exe, Env: []string{"METALAB_FAKE_RUNNER=" + mode}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	reply, err := p.Call(context.Background(), MsgHello, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d := Decoder{B: reply}
	if got := d.Str(); got != "fake runner "+mode {
		t.Fatalf("HELLO = %q", got)
	}
	return p
}

var testBufs = []backend.Buffer{{Index: 1, Data: []byte{1, 2, 3}}, {Index: 0, Data: []byte{9}}, {Index: 0, Threadgroup: true, Size: 64}}

func TestExecute(t *testing.T) {
	tests := []struct {
		mode      string
		times     []time.Duration
		wantTotal time.Duration
	}{
		{"cpu", []time.Duration{5, 7}, 12},
		{"cuda", []time.Duration{}, 99},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			p := startFake(t, tt.mode)
			r, err := p.Execute(context.Background(), testBufs, Dispatch{Handle: 3, Repeat: 2}, time.Minute, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(r.Times) != fmt.Sprint(tt.times) || r.Total != tt.wantTotal {
				t.Errorf("Times %v, Total %v; want %v, %v", r.Times, r.Total, tt.times, tt.wantTotal)
			}
			if fmt.Sprint(r.Outputs) != fmt.Sprint(map[int][]byte{0: {10}, 1: {2, 3, 4}}) {
				t.Errorf("Outputs = %v", r.Outputs)
			}
		})
	}
}

// TestKeptBuffers binds keyed buffers on a runner that keeps copies:
// the second run restores the copy (the fake shows it by answering with
// the first run's bytes, though the second sent others under the same
// key, which a caller must not do), a runner that lost its copy is sent
// the bytes again, and a discarded buffer is not read back.
func TestKeptBuffers(t *testing.T) {
	run := func(p *Proc, data byte) map[int][]byte {
		t.Helper()
		bufs := []backend.Buffer{{Index: 0, Data: []byte{data, data}, Key: "case1/x"}, {Index: 1, Data: []byte{7}, Discard: true}}
		r, err := p.Execute(context.Background(), bufs, Dispatch{Handle: 3}, time.Minute, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return r.Outputs
	}
	for _, tt := range []struct {
		mode  string
		keeps bool
		want  string
	}{
		{"cpu", true, "map[0:[2 2]]"},   // restored: the first run's bytes
		{"evict", true, "map[0:[6 6]]"}, // sent again
		{"cpu", false, "map[0:[6 6]]"},  // a runner that keeps nothing
	} {
		p := startFake(t, tt.mode)
		p.Keeps = tt.keeps
		if got := fmt.Sprint(run(p, 1)); got != "map[0:[2 2]]" {
			t.Errorf("%s: first run's outputs %s", tt.mode, got)
		}
		if got := fmt.Sprint(run(p, 5)); got != tt.want {
			t.Errorf("%s (keeps %v): second run's outputs %s, want %s", tt.mode, tt.keeps, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	p := startFake(t, "cpu")
	for _, so := range []string{"/c/k.so", "/c/cuda.so"} {
		l, err := p.Load(context.Background(), so, "k", 0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		s := l.Slots[5]
		if l.Handle != 3 || l.TGMem != 64 || l.MaxThreads != 256 || s.Name != "tile" || fmt.Sprint(s.Extents) != "[4 4]" || s.ElemSize != 4 {
			t.Errorf("Load(%s) = %+v", so, l)
		}
		if want := map[string]string{"/c/k.so": "", "/c/cuda.so": "registers 12 for k"}[so]; l.Resources != want {
			t.Errorf("Load(%s).Resources = %q, want %q", so, l.Resources, want)
		}
		if want := map[string]int{"/c/k.so": -1, "/c/cuda.so": 58}[so]; l.StaticShared != want {
			t.Errorf("Load(%s).StaticShared = %d, want %d", so, l.StaticShared, want)
		}
	}
}

// TestDispatchFailures: how a dispatch that goes wrong comes back.
func TestDispatchFailures(t *testing.T) {
	tests := []struct {
		mode    string
		timeout time.Duration
		check   func(t *testing.T, err error)
	}{
		{"err", time.Minute, func(t *testing.T, err error) {
			var e *Error
			if !errors.As(err, &e) || e.Kind != ErrBadAccess || e.Msg != "canary overwritten" || len(e.Findings) != 1 {
				t.Fatalf("err = %v, want an ERR reply with one finding", err)
			}
			f := e.Findings[0]
			if f.Kind != 3 || !f.Fatal || f.Buffer != 2 || f.Offset != 16 || !f.A.Valid || f.B.Valid || f.A.Thread != 33 || f.A.File != "k.metal" || f.Note != "note" {
				t.Errorf("finding = %+v", f)
			}
		}},
		{"badmagic", time.Minute, func(t *testing.T, err error) {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("err = %v, want ErrProtocol", err)
			}
		}},
		{"exit70", time.Minute, wantKind(backend.BadAccess, "bad access: kernel k: illegal address")},
		{"exit71", time.Minute, wantKind(backend.Crash, "crash: kernel k: trap")},
		{"exit74", time.Minute, wantKind(backend.Timeout, "timeout: kernel k: watchdog")},
		{"hang", 300 * time.Millisecond, wantKind(backend.Timeout, "did not finish within 300ms")},
		// A fault of kernel code outside the runner's layout is a write
		// through a forged pointer: the kernel's bad access.
		{"segv", time.Minute, wantKind(backend.BadAccess, "bad access: SIGSEGV at address 0x10000 in thread 3")},
		{"overflow", time.Minute, wantKind(backend.Crash, "stack overflow")},
		{"sigsys", time.Minute, wantKind(backend.Sandbox, "forbidden system call")},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			p := startFake(t, tt.mode)
			_, err := p.Execute(context.Background(), testBufs, Dispatch{}, tt.timeout, time.Minute)
			tt.check(t, err)
			var se *StepError
			if errors.As(err, &se) {
				t.Errorf("a dispatch's failure came back as a StepError: %v", err)
			}
			if tt.mode != "err" && !p.Dead() {
				t.Error("the runner is not marked dead")
			}
		})
	}
}

func wantKind(kind backend.FailureKind, msg string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var f *backend.Failure
		if !errors.As(err, &f) || f.Kind != kind || !strings.Contains(f.Msg, msg) {
			t.Fatalf("err = %v, want a %s failure containing %q", err, kind, msg)
		}
	}
}

func TestRetry(t *testing.T) {
	violation := fmt.Errorf("%w: reply header 00", ErrProtocol)
	tests := []struct {
		name     string
		results  []error
		wantRuns int
		wantKind backend.FailureKind // "" for success
	}{
		{"fine", []error{nil}, 1, ""},
		{"once", []error{violation, nil}, 2, ""},
		{"twice", []error{violation, violation}, 2, backend.Sandbox},
		{"crash", []error{&backend.Failure{Kind: backend.Crash}}, 1, backend.Crash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := 0
			res, err := Retry(context.Background(), func() (*backend.Result, error) {
				err := tt.results[runs]
				runs++
				if err != nil {
					return nil, err
				}
				return &backend.Result{}, nil
			}, func() string { return "the log" })
			if runs != tt.wantRuns {
				t.Errorf("%d runs, want %d", runs, tt.wantRuns)
			}
			if tt.wantKind == "" {
				if err != nil || res == nil {
					t.Errorf("Retry = %v, %v; want a result", res, err)
				}
				return
			}
			var f *backend.Failure
			if !errors.As(err, &f) || f.Kind != tt.wantKind {
				t.Fatalf("Retry = %v, want a %s failure", err, tt.wantKind)
			}
			if tt.wantKind == backend.Sandbox && (f.Log != "the log" || !strings.Contains(f.Msg, "broke the runner's protocol twice")) {
				t.Errorf("failure = %+v", f)
			}
		})
	}
}

func TestCheckBuffers(t *testing.T) {
	tests := []struct {
		bufs    []backend.Buffer
		wantErr string
	}{
		{[]backend.Buffer{{Index: 0}, {Index: 0, Threadgroup: true}, {Index: 30}}, ""},
		{[]backend.Buffer{{Index: 31}}, "buffer index 31 outside 0..30"},
		{[]backend.Buffer{{Index: -1}}, "buffer index -1 outside 0..30"},
		{[]backend.Buffer{{Index: 2}, {Index: 2}}, "buffer index 2 bound twice"},
	}
	for _, tt := range tests {
		err := CheckBuffers("k", tt.bufs, 30)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("CheckBuffers(%v) = %v, want %q", tt.bufs, err, tt.wantErr)
		}
	}
}

func TestDecoderShort(t *testing.T) {
	d := Decoder{B: []byte{1, 0, 0}}
	if v := d.U32(); v != 0 || d.Err == nil {
		t.Errorf("U32 of 3 bytes = %d, err %v; want 0 and an error", v, d.Err)
	}
	if v := d.U8(); v != 0 {
		t.Errorf("a read after an error = %d, want 0", v)
	}
}
