package cuda

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/measure"
	"metalab/spec"
)

// controlPos0 is the position of the full case the control measures.
const controlPos0 = 8192

// controlSample is how much kernel time one sample should hold: enough
// dispatches (Dispatch.Repeat) that a launch's jitter is small beside it.
const controlSample = 10 * time.Millisecond

// controlDispatches is the fewest dispatches a sample holds: the seeds'
// three layers.
const controlDispatches = 3

// qsaCase instantiates the case of qsa_prompt.yaml's set whose pos0 is
// pos0.
func qsaCase(t *testing.T, set string, pos0 int) *spec.Instance {
	t.Helper()
	s, err := spec.Load(filepath.Join(root, "kernels/qsa_prompt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := s.Cases(set)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, v := range c.Vars {
			if v.Name == "pos0" && fmt.Sprint(v.Value) == fmt.Sprint(pos0) {
				in, err := s.Instantiate(c)
				if err != nil {
					t.Fatal(err)
				}
				return in
			}
		}
	}
	t.Fatalf("qsa_prompt.yaml's %s set has no case with pos0=%d", set, pos0)
	return nil
}

// TestGPUControlQSA measures each stage of qsa_prompt.yaml's full case at
// pos0=8192 against itself on the GPU with measure.Control (9 pairs, the
// default): what a sweep's control would see. It logs, per stage, the
// dispatches per sample, the median ratio and its 95 % interval, the
// spread (the smallest difference the measurement resolves), each side's
// noise and what the screen flagged, and the share of the wall time the
// GPU spent in the kernels (the rest is binding and reading back the
// buffers). A control that is not usable (contaminated, cut short) fails
// the test: it would make a sweep's decisions inconclusive.
func TestGPUControlQSA(t *testing.T) {
	g := gpuBackend(t, Options{})
	in := qsaCase(t, "full", controlPos0)
	lines := controlStages(t, gpuCompile(g), in, measure.ClockGPU, "cuda: GPU time of the dispatches (CUDA events)")
	t.Logf("control at %s/%s (pos0=%d), 9 pairs per stage:\n%s", in.Case.Set, in.Case.Name, controlPos0, strings.Join(lines, "\n"))
}

// TestControlHarness runs TestGPUControlQSA's machinery on the cpu backend
// and a quick case (its clock is the host's): calibration, the sampler,
// the statistics and the report, where there is no GPU.
func TestControlHarness(t *testing.T) {
	c := cpuBackend(t)
	compile := func(ctx context.Context, src backend.Source) (backend.Program, error) { return c.Compile(ctx, src) }
	in := qsaCase(t, "quick", 0)
	lines := controlStages(t, compile, in, measure.ClockHost, "cpu emulator time")
	if len(lines) != len(in.Stages) {
		t.Fatalf("%d stages measured, want %d", len(lines), len(in.Stages))
	}
	t.Logf("\n%s", strings.Join(lines, "\n"))
}

// controlStages runs the stages of in once, in order, so that each is
// measured on the inputs the pipeline gives it (qsa_merge on
// qsa_attn_part's partials), and measures each against itself with
// measure.Control, returning one line per stage. clock is the clock of
// the backend's Result.Total.
func controlStages(t *testing.T, compile compileFunc, in *spec.Instance, clock, label string) []string {
	t.Helper()
	ctx := context.Background()
	state := map[string][]byte{}
	for _, b := range in.Buffers {
		if b.Role != spec.Threadgroup {
			state[b.Name] = bytes.Clone(b.Data)
		}
	}
	var lines []string
	for _, st := range in.Stages {
		p, err := compile(ctx, stageSource(t, st))
		if err != nil {
			t.Fatalf("compile %s: %v", st.Entry, err)
		}
		defer p.Close()
		out, err := runStage(ctx, p, in, st, state, backend.Order{})
		if err != nil {
			t.Fatalf("%s: %v", st.Entry, err)
		}
		d := backend.Dispatch{Threadgroups: st.Threadgroups, Threads: st.Threads}
		for _, bind := range st.Bindings {
			b := in.Buffer(bind.Buffer)
			if b.Role == spec.Threadgroup {
				d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Size: b.Size, Threadgroup: true})
			} else {
				// As a sweep's samples: bytes kept on the device by key,
				// nothing read back.
				d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Data: state[b.Name],
					Key: fmt.Sprintf("control/%s/%s", st.Entry, b.Name), Discard: true})
			}
		}
		for k, v := range out {
			state[k] = v
		}
		// Calibrate: dispatches per sample for controlSample of kernel time.
		res, err := p.Run(ctx, d)
		if err != nil {
			t.Fatalf("%s: %v", st.Entry, err)
		}
		d.Repeat = int(min(1000, max(controlDispatches, int64(controlSample/max(res.Total, time.Microsecond)))))
		var busy time.Duration
		sampler := func(ctx context.Context) (measure.Sample, error) {
			res, err := p.Run(ctx, d)
			if err != nil {
				return measure.Sample{}, err
			}
			busy += res.Total
			return measure.Sample{Dur: res.Total, Clock: clock}, nil
		}
		start := time.Now()
		r, err := measure.Control(ctx, sampler, measure.Options{Dispatches: d.Repeat, A: st.Entry, Label: label})
		wall := time.Since(start)
		if err != nil {
			t.Fatalf("%s: control: %v", st.Entry, err)
		}
		var text strings.Builder
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s\n%s", st.Entry, text.String())
		s := r.Stats
		if s.N != 9 || !(s.Lo <= s.Ratio && s.Ratio <= s.Hi) {
			t.Errorf("%s: %d pairs, ratio %v outside its interval [%v, %v]", st.Entry, s.N, s.Ratio, s.Lo, s.Hi)
		}
		lines = append(lines, fmt.Sprintf("%-14s %4d dispatches/sample, median %v per sample: ratio %.4f [%.4f, %.4f] (%d pairs), spread %.2f %%, noise %.2f %% / %.2f %%, flags %v; kernels %.1f %% of %v wall",
			st.Entry, d.Repeat, s.MedianA, s.Ratio, s.Lo, s.Hi, s.N, 100*r.Spread(), 100*s.NoiseA, 100*s.NoiseB, r.Flags,
			100*busy.Seconds()/wall.Seconds(), wall.Round(time.Millisecond)))
		if err := r.Usable(); err != nil && clock == measure.ClockGPU {
			t.Errorf("%s: the control is not usable: %v", st.Entry, err)
		}
	}
	return lines
}
