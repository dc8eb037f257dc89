package fake

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"metalab/backend"
)

func run(t *testing.T, src, entry string, order backend.Order) (map[int][]byte, error) {
	t.Helper()
	p, err := New().Compile(context.Background(), backend.Source{Name: "k.metal", Text: []byte(src), Entry: entry})
	if err != nil {
		return nil, err
	}
	res, err := p.Run(context.Background(), backend.Dispatch{Order: order, Buffers: []backend.Buffer{
		{Index: 0, Data: []byte{1, 2, 3, 4}},
		{Index: 1, Data: []byte{9, 9, 9, 9}, Output: true},
		{Index: 2, Size: 64, Threadgroup: true},
	}})
	if err != nil {
		return nil, err
	}
	return res.Outputs, nil
}

func TestOps(t *testing.T) {
	tests := []struct {
		name, src, entry string
		order            backend.Order
		want             []byte // buffer 1 afterwards
		wantFail         backend.FailureKind
	}{
		{name: "no markers", src: "kernel void k() {}", want: []byte{9, 9, 9, 9}},
		{name: "copy", src: "// fake: copy 0 1", want: []byte{1, 2, 3, 4}},
		{name: "copy then poke", src: "// fake: copy 0 1\n// fake: poke 1 2 0x7f", want: []byte{1, 2, 0x7f, 4}},
		{name: "add", src: "// fake: add 0 1", want: []byte{10, 11, 12, 13}},
		{name: "fill", src: "// fake: fill 1 0", want: []byte{0, 0, 0, 0}},
		{name: "other entry", src: "// fake[prep]: fill 1 0\n// fake[score]: copy 0 1", entry: "score", want: []byte{1, 2, 3, 4}},
		{name: "order reversed", src: "// fake: order 1", order: backend.Order{Kind: "reversed"}, want: []byte{1, 9, 9, 9}},
		{name: "order shuffle", src: "// fake: order 1", order: backend.Order{Kind: "shuffle", Seed: 3}, want: []byte{5, 9, 9, 9}},
		{name: "compile error", src: "// fake: compile-error bad", wantFail: backend.CompileError},
		{name: "unknown op", src: "// fake: explode", wantFail: backend.CompileError},
		{name: "wrong arity", src: "// fake: copy 0", wantFail: backend.CompileError},
		{name: "crash", src: "// fake: crash", wantFail: backend.Crash},
		{name: "timeout", src: "// fake: timeout", wantFail: backend.Timeout},
		{name: "poke out of bounds", src: "// fake: poke 1 4 0", wantFail: backend.BadAccess},
		{name: "threadgroup buffer is not a device buffer", src: "// fake: fill 2 0", wantFail: backend.BadAccess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.src, tt.entry, tt.order)
			var f *backend.Failure
			if tt.wantFail != "" {
				if !errors.As(err, &f) || f.Kind != tt.wantFail {
					t.Fatalf("error = %v, want a %s failure", err, tt.wantFail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(out[1]) != string(tt.want) {
				t.Errorf("buffer 1 = %v, want %v", out[1], tt.want)
			}
		})
	}
}

func TestNondeterministicAndTGMem(t *testing.T) {
	p, err := New().Compile(context.Background(), backend.Source{Text: []byte("// fake: nondeterministic 0\n// fake: tgmem 4096")})
	if err != nil {
		t.Fatal(err)
	}
	if p.ThreadgroupMemory() != 4096 {
		t.Errorf("ThreadgroupMemory = %d", p.ThreadgroupMemory())
	}
	d := backend.Dispatch{Buffers: []backend.Buffer{{Index: 0, Data: []byte{0}}}}
	a, _ := p.Run(context.Background(), d)
	b, _ := p.Run(context.Background(), d)
	if a.Outputs[0][0] == b.Outputs[0][0] {
		t.Error("two runs of a nondeterministic program agree")
	}
	if d.Buffers[0].Data[0] != 0 {
		t.Error("Run modified the caller's buffer")
	}
}

func TestTimingMarkers(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		repeat int
		first  byte // byte 0 of buffer 0
		want   time.Duration
		// wantErr is a compile error's expected substring.
		wantErr string
	}{
		{name: "no markers", src: "// fake: copy 0 1", want: 0},
		{name: "time", src: "// fake: time 2ms", want: 2 * time.Millisecond},
		{name: "times add up", src: "// fake: time 2ms\n// fake: time 500us", want: 2500 * time.Microsecond},
		{name: "repeat", src: "// fake: time 2ms", repeat: 3, want: 6 * time.Millisecond},
		{name: "time-if taken", src: "// fake: time 1ms\n// fake: time-if 0 0 7 3ms", first: 7, want: 4 * time.Millisecond},
		{name: "time-if not taken", src: "// fake: time 1ms\n// fake: time-if 0 0 7 3ms", first: 6, want: time.Millisecond},
		{name: "time-if sees the bytes before the dispatch", src: "// fake: fill 0 7\n// fake: time-if 0 0 7 3ms", first: 1, want: 0},
		{name: "sleep", src: "// fake: sleep 1ms", want: time.Millisecond},
		{name: "bad duration", src: "// fake: time soon", wantErr: "time:"},
		{name: "time-if arity", src: "// fake: time-if 0 7 3ms", wantErr: "wants 4 arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New().Compile(context.Background(), backend.Source{Name: "k.metal", Text: []byte(tt.src)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Compile error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := p.Run(context.Background(), backend.Dispatch{Repeat: tt.repeat, Buffers: []backend.Buffer{
				{Index: 0, Data: []byte{tt.first, 0}}, {Index: 1, Data: []byte{0, 0}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != tt.want {
				t.Errorf("Total = %v, want %v", res.Total, tt.want)
			}
			var sum time.Duration
			for _, d := range res.Times {
				sum += d
			}
			if sum != res.Total || len(res.Times) != max(tt.repeat, 1) {
				t.Errorf("Times = %v, want %d dispatches adding up to Total %v", res.Times, max(tt.repeat, 1), res.Total)
			}
			if strings.Contains(tt.src, "sleep") && time.Since(start) < tt.want {
				t.Errorf("sleep returned after %v, before %v", time.Since(start), tt.want)
			}
		})
	}
}

func TestSleepStopsWithContext(t *testing.T) {
	p, err := New().Compile(context.Background(), backend.Source{Text: []byte("// fake: sleep 1h")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Run(ctx, backend.Dispatch{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want the context's error", err)
	}
}
