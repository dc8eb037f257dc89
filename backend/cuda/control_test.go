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

// controlSample is how much GPU time one sample should hold: enough
// dispatches (Dispatch.Repeat) that a launch's jitter is small beside it.
const controlSample = 2 * time.Millisecond

// TestGPUControlQSA measures each stage of qsa_prompt.yaml's full case at
// pos0=8192 against itself on the GPU with measure.Control (9 pairs, the
// default): what a sweep's control would see. It logs, per stage, the
// dispatches per sample, the median ratio and its 95 % interval, the
// spread (the smallest difference the measurement resolves), each side's
// noise and what the screen flagged, and the share of the wall time the
// GPU spent in the kernels (the rest is binding and reading back the
// buffers). A contaminated or incomplete control fails the test: it
// would make a sweep's decisions inconclusive.
func TestGPUControlQSA(t *testing.T) {
	g := gpuBackend(t, Options{})
	ctx := context.Background()
	s, err := spec.Load(filepath.Join(root, "kernels/qsa_prompt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := s.Cases("full")
	if err != nil {
		t.Fatal(err)
	}
	var in *spec.Instance
	for _, c := range cases {
		for _, v := range c.Vars {
			if v.Name == "pos0" && fmt.Sprint(v.Value) == fmt.Sprint(controlPos0) {
				if in, err = s.Instantiate(c); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if in == nil {
		t.Fatalf("qsa_prompt.yaml's full set has no case with pos0=%d", controlPos0)
	}
	// The stages in order once, so that each is timed on the inputs the
	// pipeline gives it (qsa_merge on qsa_attn_part's partials).
	state := map[string][]byte{}
	for _, b := range in.Buffers {
		if b.Role != spec.Threadgroup {
			state[b.Name] = bytes.Clone(b.Data)
		}
	}
	var lines []string
	for _, st := range in.Stages {
		p, err := gpuCompile(g)(ctx, stageSource(t, st))
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
				d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Data: state[b.Name]})
			}
		}
		for k, v := range out {
			state[k] = v
		}
		// Calibrate: dispatches per sample for controlSample of GPU time.
		res, err := p.Run(ctx, d)
		if err != nil {
			t.Fatalf("%s: %v", st.Entry, err)
		}
		d.Repeat = int(min(1000, max(1, int64(controlSample/max(res.Total, time.Microsecond)))))
		var gpu time.Duration
		sampler := func(ctx context.Context) (measure.Sample, error) {
			res, err := p.Run(ctx, d)
			if err != nil {
				return measure.Sample{}, err
			}
			gpu += res.Total
			return measure.Sample{Dur: res.Total, Clock: measure.ClockGPU}, nil
		}
		start := time.Now()
		r, err := measure.Control(ctx, sampler, measure.Options{Dispatches: d.Repeat, A: st.Entry, B: st.Entry,
			Label: "cuda: GPU time of the dispatches (CUDA events)"})
		wall := time.Since(start)
		if err != nil {
			t.Fatalf("%s: control: %v", st.Entry, err)
		}
		var text strings.Builder
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		stats := r.Stats
		lines = append(lines, fmt.Sprintf("%-14s %4d dispatches/sample, median %v per sample: ratio %.4f [%.4f, %.4f] (%d pairs), spread %.2f %%, noise %.2f %% / %.2f %%, flags %v; GPU %.1f %% of %v wall",
			st.Entry, d.Repeat, stats.MedianA, stats.Ratio, stats.Lo, stats.Hi, stats.N, 100*r.Spread(), 100*stats.NoiseA, 100*stats.NoiseB, r.Flags,
			100*gpu.Seconds()/wall.Seconds(), wall.Round(time.Millisecond)))
		t.Logf("%s\n%s", st.Entry, text.String())
		if err := r.Usable(); err != nil {
			t.Errorf("%s: the control is not usable: %v", st.Entry, err)
		}
	}
	t.Logf("control at %s/%s (pos0=%d), 9 pairs per stage:\n%s", in.Case.Set, in.Case.Name, controlPos0, strings.Join(lines, "\n"))
}
