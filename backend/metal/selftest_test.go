package metal

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"metalab/backend"
)

// fakeBackend runs the self-test kernel on the fake device through a real
// residency: what `metalab backends` reports on a Mac, without one.
type fakeBackend struct {
	why     string
	compile error
	dev     *fakeDevice
	res     *residency
	src     backend.Source
}

func (b *fakeBackend) Name() string                             { return "metal" }
func (b *fakeBackend) Available(context.Context) (bool, string) { return b.why == "", b.why }
func (b *fakeBackend) Info(context.Context) backend.Info        { return backend.Info{Name: "metal"} }
func (b *fakeBackend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	b.src = src
	if b.compile != nil {
		return nil, b.compile
	}
	return &fakeProgram{b: b}, nil
}

type fakeProgram struct{ b *fakeBackend }

func (p *fakeProgram) ThreadgroupMemory() int        { return 0 }
func (p *fakeProgram) MaxThreadsPerThreadgroup() int { return 1024 }
func (p *fakeProgram) Close() error                  { return nil }
func (p *fakeProgram) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	pl, err := planDispatch(selfTestEntry, d, testLimits)
	if err != nil {
		return nil, err
	}
	res, _, err := p.b.res.run(ctx, p.b.dev, selfTestEntry, pl)
	return res, err
}

// selfTestKernel is the self-test kernel, with K read from the source's
// constants.
func selfTestKernel(b *fakeBackend) func(map[int][]byte) {
	return func(m map[int][]byte) {
		k := uint32(b.src.Constants["K"].Bits)
		out := m[0]
		binary.LittleEndian.PutUint32(out, 3*(k+1))
		binary.LittleEndian.PutUint32(out[4:], ^binary.LittleEndian.Uint32(out[4:]))
	}
}

func TestSelfTest(t *testing.T) {
	b := &fakeBackend{res: newResidency(0)}
	b.dev = newFake(selfTestKernel(b))
	steps := selfTest(context.Background(), b)
	var names []string
	for _, s := range steps {
		if !s.OK {
			t.Errorf("step %q failed: %s", s.Name, s.Detail)
		}
		names = append(names, s.Name)
	}
	want := "open the device|compile (function constant K, threadgroup buffer)|dispatch one thread|read the output|GPU timestamps|dispatch again (output restored from its kept copy)"
	if got := strings.Join(names, "|"); got != want {
		t.Errorf("steps %s\nwant  %s", got, want)
	}
	if !strings.Contains(string(b.src.Text), "[[function_constant(0)]]") || !strings.Contains(string(b.src.Text), "[[threadgroup(0)]]") {
		t.Error("the self-test kernel lacks a function constant or a threadgroup buffer")
	}
}

func TestSelfTestReportsTheFailingStep(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(b *fakeBackend)
		step     string
		contains string
	}{
		{"no device", func(b *fakeBackend) { b.why = "metal backend: no Metal device" }, "open the device", "no Metal device"},
		{"compile error", func(b *fakeBackend) {
			b.compile = &backend.Failure{Kind: backend.CompileError, Msg: "metalab-selftest.metal:3:1: error: x"}
		}, "compile (function constant K, threadgroup buffer)", "error: x"},
		{"fault", func(b *fakeBackend) {
			b.dev.next = &completion{Failed: true, Domain: cbErrorDomain, Code: 3, Desc: "page fault"}
		}, "dispatch one thread", "GPU page fault"},
		{"wrong output", func(b *fakeBackend) { b.dev.kernel = func(map[int][]byte) {} }, "read the output", "did not run as compiled"},
		{"no timestamps", func(b *fakeBackend) { b.dev.next = &completion{} }, "dispatch one thread", "no usable GPU timestamps"},
		{"no restore", func(b *fakeBackend) {
			b.dev.restoreC = &completion{Start: 1, End: 2} // "completes" without copying
		}, "read the output", "not restored from its kept copy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{res: newResidency(0)}
			b.dev = newFake(selfTestKernel(b))
			tt.setup(b)
			steps := selfTest(context.Background(), b)
			last := steps[len(steps)-1]
			if last.OK || last.Name != tt.step || !strings.Contains(last.Detail, tt.contains) {
				t.Errorf("last step %+v; want step %q failed with %q", last, tt.step, tt.contains)
			}
			for _, s := range steps[:len(steps)-1] {
				if !s.OK {
					t.Errorf("step %q failed before the last", s.Name)
				}
			}
		})
	}
}
