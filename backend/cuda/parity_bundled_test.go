package cuda

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu"
	"metalab/internal/f16"
	"metalab/internal/testenv"
	"metalab/spec"
)

// paritySets are the case sets the parity test runs per spec: quick, and
// for qsa_prompt also fallback (the only set with COOP_K4 false).
var paritySets = map[string][]string{
	"kernels/qsa_prompt.yaml": {"quick", "fallback"},
}

// parityTranscendental are the bundled kernels whose outputs may differ
// between the cpu and the cuda backend, with the reason: each calls a
// transcendental function, which is CUDA's libdevice on the GPU and the
// host's libm on the cpu backend; both are within a few ulp of the true
// value, rarely the same one (backend/cuda's package documentation). Every
// other bundled kernel must give the same bytes. (sqrt and rsqrt, which
// the prelude writes as 1/sqrt, are correctly rounded on both.)
var parityTranscendental = map[string]string{
	"qsa_prompt.yaml qsa_flash":                  "exp in the online softmax over the selected cells",
	"qsa_prompt.yaml qsa_attn_part":              "exp in each chunk's softmax",
	"qsa_prompt.yaml qsa_merge":                  "exp rescaling the chunks' partial sums to the common maximum",
	"ggml-ops.yaml kernel_soft_max_f32":          "exp in the softmax",
	"ggml-ops.yaml kernel_soft_max_f16":          "exp in the softmax",
	"kernels.yaml block_softmax_float32":         "exp in MLX's block softmax",
	"kernels.yaml block_softmax_float16":         "exp in MLX's block softmax",
	"kernels.yaml block_softmax_precise_float32": "exp in MLX's block softmax",
	"kernels.yaml block_softmax_precise_float16": "exp in MLX's block softmax",
	"candle-ops.yaml exp_f32_strided":            "exp, elementwise",
	"candle-ops.yaml exp_f16":                    "exp, elementwise",
	"attention.yaml attention_vector":            "exp in the attention's softmax",
	"softmax.yaml softmax_online":                "exp in the online softmax",
}

// transcendentalCall finds a call of a transcendental function in a
// translation (TestParityTranscendentalList holds the list to it).
var transcendentalCall = regexp.MustCompile(`\b(exp|exp2|exp10|log|log2|log10|pow|powr|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|sinpi|cospi|tanpi)\s*\(`)

// Bounds on how far a transcendental kernel's outputs may be from the cpu
// backend's, in units in the last place of the output's type: rounding
// differences of a few ulp, grown through the sums after them. Beyond
// them the difference is a wiring error (a binding, a race), not rounding.
const (
	maxULP32 = 64
	maxULP16 = 4
)

// A stageProgs is one stage's program on each backend.
type stageProgs struct {
	cpu, gpu backend.Program
}

// compileFunc compiles a source on the backend compared with the cpu
// backend.
type compileFunc func(ctx context.Context, src backend.Source) (backend.Program, error)

// gpuCompile is Compile on g, with the failure's log in the error.
func gpuCompile(g *Backend) compileFunc {
	return func(ctx context.Context, src backend.Source) (backend.Program, error) {
		p, err := g.Compile(ctx, src)
		var f *backend.Failure
		if errors.As(err, &f) {
			err = fmt.Errorf("%w\n%s", err, f.Log)
		}
		return p, err
	}
}

// TestGPUParityBundled runs every bundled kernel on its quick cases on
// the cpu backend and on the GPU, stage by stage from the same inputs (the
// cpu backend's outputs of the stages before), and compares every output
// buffer byte for byte. A kernel listed in parityTranscendental may
// differ, within maxULP32 or maxULP16; any other difference fails. The
// summary is logged, kernel by kernel.
func TestGPUParityBundled(t *testing.T) {
	g := gpuBackend(t, Options{})
	c := cpuBackend(t)
	var mu sync.Mutex
	summary := map[string]*parityStat{}
	t.Run("specs", func(t *testing.T) {
		for _, path := range bundledSpecs {
			t.Run(filepath.Base(path), func(t *testing.T) {
				t.Parallel()
				stats := parityOfSpec(t, c, gpuCompile(g), path)
				mu.Lock()
				for k, s := range stats {
					summary[k] = s
				}
				mu.Unlock()
			})
		}
	})
	var names []string
	for n := range summary {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%-48s %s\n", n, summary[n])
	}
	t.Logf("cpu against cuda, kernel by kernel (stage runs, outputs compared):\n%s", b.String())
}

// A parityStat sums up one kernel's comparisons.
type parityStat struct {
	runs, differing int // stage runs, and those whose outputs differed
	elems, of       int // differing elements, of compared elements
	maxULP          int64
	maxScaled       int64
	why             string // parityTranscendental's reason, if listed
}

func (s *parityStat) String() string {
	if s.differing == 0 {
		return fmt.Sprintf("identical in %d runs", s.runs)
	}
	return fmt.Sprintf("differs in %d of %d runs: %d of %d elements, at most %d ulp of the buffer's largest value (%d of their own; %s)", s.differing, s.runs, s.elems, s.of, s.maxScaled, s.maxULP, s.why)
}

// parityOfSpec runs one spec's parity cases on the cpu backend and the
// backend other compiles for, and returns each kernel's summary, by "spec
// entry".
func parityOfSpec(t *testing.T, c *cpu.Backend, other compileFunc, path string) map[string]*parityStat {
	t.Helper()
	ctx := context.Background()
	s, err := spec.Load(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	sets := paritySets[path]
	if sets == nil {
		sets = []string{"quick"}
	}
	cases, err := s.Cases(sets...)
	if err != nil {
		t.Fatal(err)
	}
	var insts []*spec.Instance
	for _, cs := range cases {
		in, err := s.Instantiate(cs)
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, in)
	}
	// Compile every stage configuration on both backends at once.
	progs := map[string]*stageProgs{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, in := range insts {
		for _, st := range in.Stages {
			key := stageKey(st)
			if progs[key] != nil {
				continue
			}
			sp := &stageProgs{}
			progs[key] = sp
			src := stageSource(t, st)
			wg.Add(2)
			go func() {
				defer wg.Done()
				p, err := c.Compile(ctx, src)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("cpu: compile %s: %w", st.Entry, err))
					return
				}
				sp.cpu = p
			}()
			go func() {
				defer wg.Done()
				p, err := other(ctx, src)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("compile %s: %w", st.Entry, err))
					return
				}
				sp.gpu = p
			}()
		}
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, sp := range progs {
			for _, p := range []backend.Program{sp.cpu, sp.gpu} {
				if p != nil {
					p.Close()
				}
			}
		}
	})
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	stats := map[string]*parityStat{}
	for _, in := range insts {
		state := map[string][]byte{}
		for _, b := range in.Buffers {
			if b.Role != spec.Threadgroup {
				state[b.Name] = bytes.Clone(b.Data)
			}
		}
		for _, st := range in.Stages {
			name := filepath.Base(path) + " " + st.Entry
			stat := stats[name]
			if stat == nil {
				stat = &parityStat{why: parityTranscendental[name]}
				stats[name] = stat
			}
			sp := progs[stageKey(st)]
			want, err := runStage(ctx, sp.cpu, in, st, state, backend.Order{Kind: "in-order"})
			if err != nil {
				t.Fatalf("%s %s/%s on the cpu backend: %v", st.Entry, in.Case.Set, in.Case.Name, err)
			}
			got, err := runStage(ctx, sp.gpu, in, st, state, backend.Order{})
			if err != nil {
				t.Fatalf("%s %s/%s on the GPU: %v", st.Entry, in.Case.Set, in.Case.Name, err)
			}
			stat.runs++
			differs := false
			for _, bname := range sortedKeys(want) {
				buf := in.Buffer(bname)
				w, gg := want[bname], got[bname]
				stat.of += buf.Count
				if bytes.Equal(w, gg) {
					continue
				}
				differs = true
				n, ulp, float := compareElems(buf.Type, buf.Elems(w), buf.Elems(gg))
				scaled := scaledDistance(buf.Type, buf.Elems(w), buf.Elems(gg))
				stat.elems += n
				stat.maxULP = max(stat.maxULP, ulp)
				stat.maxScaled = max(stat.maxScaled, scaled)
				where := fmt.Sprintf("%s case %s/%s, buffer %s", st.Entry, in.Case.Set, in.Case.Name, bname)
				bound := int64(maxULP32)
				if buf.Type.Scalar == "half" || buf.Type.Scalar == "bfloat" {
					bound = maxULP16
				}
				switch {
				case !bytes.Equal(w[len(buf.Elems(w)):], gg[len(buf.Elems(gg)):]):
					t.Errorf("%s: the GPU wrote past the buffer's %d elements", where, buf.Count)
				case stat.why == "":
					t.Errorf("%s: the GPU's bytes differ from the cpu backend's in %d of %d elements (at most %d ulp): not a kernel with transcendental functions", where, n, buf.Count, ulp)
				case !float || scaled < 0 || scaled > bound:
					t.Errorf("%s: %d of %d elements differ, by at most %d ulp of the buffer's largest value (bound %d; %d ulp of their own): beyond the rounding of %s", where, n, buf.Count, scaled, bound, ulp, stat.why)
				}
			}
			if differs {
				stat.differing++
			}
			for k, v := range want {
				state[k] = v
			}
		}
	}
	return stats
}

// stageKey names a stage's program: source, entry and configuration.
func stageKey(st *spec.Stage) string { return st.Source + "\x00" + st.Entry + "\x00" + st.ConfigKey() }

// stageSource is the backend.Source of a stage.
func stageSource(t *testing.T, st *spec.Stage) backend.Source {
	t.Helper()
	text := readFile(t, st.Source)
	return backend.Source{Name: st.Source, Text: text, Dir: filepath.Dir(st.Source), IncludeDirs: st.IncludeDirs,
		Entry: st.Entry, Defines: st.Defines, Constants: st.Constants}
}

// TestParityTranscendentalList holds parityTranscendental to the
// translations: a listed kernel calls a transcendental function, an
// unlisted one calls none (so the parity test's exemptions are the
// kernels the documented reason covers, no more and no fewer).
func TestParityTranscendentalList(t *testing.T) {
	testenv.RequireCXX(t)
	b := New(Options{})
	listed := map[string]bool{}
	for _, k := range bundledKernels(t, false) {
		if k.threads == 0 {
			continue // no spec, no parity case
		}
		name := strings.SplitN(k.name, " ", 3)
		key := name[0] + " " + name[1]
		cu, err := b.translate(context.Background(), k.src)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		calls := transcendentalCall.FindAllSubmatch(cuSource(cu.CU), -1)
		why, ok := parityTranscendental[key]
		listed[key] = true
		switch {
		case ok && len(calls) == 0:
			t.Errorf("%s: listed in parityTranscendental (%s), but its translation calls no transcendental function", k.name, why)
		case !ok && len(calls) > 0:
			t.Errorf("%s: calls %s, which the GPU computes with libdevice: list it in parityTranscendental", k.name, calls[0][1])
		}
	}
	for key := range parityTranscendental {
		if !listed[key] {
			t.Errorf("parityTranscendental lists %q, which is no bundled kernel with a spec", key)
		}
	}
}

// TestParityHarness runs the parity test's machinery with the cpu backend
// on both sides, on qsa_prompt's parity cases: every stage run must be
// identical, so the harness itself (bindings, stage by stage state,
// comparison) is tested where there is no GPU.
func TestParityHarness(t *testing.T) {
	c := cpuBackend(t)
	other := func(ctx context.Context, src backend.Source) (backend.Program, error) { return c.Compile(ctx, src) }
	stats := parityOfSpec(t, c, other, "kernels/qsa_prompt.yaml")
	if len(stats) != 4 {
		t.Errorf("%d kernels compared, want qsa_prompt's 4", len(stats))
	}
	for name, s := range stats {
		t.Logf("%s: %s", name, s)
		if s.runs == 0 || s.differing != 0 {
			t.Errorf("%s: %s; want identical runs", name, s)
		}
	}
}

// cuSource is the kernel source part of a TU (after the prelude's include
// and the overloads).
func cuSource(cu []byte) []byte {
	if i := bytes.Index(cu, []byte("MTL_CUDA_BEGIN_SOURCE")); i >= 0 {
		return cu[i:]
	}
	return cu
}

// runStage runs one stage of in on p with the device buffers' contents
// from state, and returns the stage's device buffers after it, by name.
func runStage(ctx context.Context, p backend.Program, in *spec.Instance, st *spec.Stage, state map[string][]byte, order backend.Order) (map[string][]byte, error) {
	d := backend.Dispatch{Threadgroups: st.Threadgroups, Threads: st.Threads, Order: order}
	for _, bind := range st.Bindings {
		b := in.Buffer(bind.Buffer)
		if b.Role == spec.Threadgroup {
			d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Size: b.Size, Threadgroup: true})
			continue
		}
		d.Buffers = append(d.Buffers, backend.Buffer{Index: bind.Index, Data: bytes.Clone(state[b.Name]), Output: true})
	}
	res, err := p.Run(ctx, d)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, bind := range st.Bindings {
		if o, ok := res.Outputs[bind.Index]; ok && !bind.Threadgroup {
			out[bind.Buffer] = o
		}
	}
	return out, nil
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// compareElems counts the elements of type t that differ between w and g
// and, for floating-point scalars and vectors, the largest distance
// between differing components in units in the last place (-1 when they
// differ in sign or class); float reports whether t is floating point.
func compareElems(t *spec.Type, w, g []byte) (n int, ulp int64, float bool) {
	size := t.Size
	comp := 0
	switch t.Scalar {
	case "float":
		comp = 4
	case "half", "bfloat":
		comp = 2
	}
	float = comp > 0 && (t.Kind == spec.Scalar || t.Kind == spec.Vector)
	for e := 0; (e+1)*size <= len(w) && (e+1)*size <= len(g); e++ {
		a, b := w[e*size:(e+1)*size], g[e*size:(e+1)*size]
		if bytes.Equal(a, b) {
			continue
		}
		n++
		if !float {
			continue
		}
		for i := 0; i+comp <= t.Lanes*comp && i+comp <= size; i += comp {
			d := ulpDistance(t.Scalar, a[i:i+comp], b[i:i+comp])
			if d < 0 || ulp < 0 {
				ulp = -1
			} else {
				ulp = max(ulp, d)
			}
		}
	}
	return n, ulp, float
}

// scaledDistance is the largest difference between the float components
// of w and g in units in the last place of w's largest finite magnitude:
// the measure for outputs that are sums of terms of both signs, where a
// rounding difference in one term is many ulp of a result that cancelled
// to near zero (or flipped its sign), yet tiny beside the terms. It is
// -1 when a component differs in class (NaN or infinity against a
// number) and 0 for types that are not floating point.
func scaledDistance(t *spec.Type, w, g []byte) int64 {
	comp, mant := 0, 0
	switch t.Scalar {
	case "float":
		comp, mant = 4, 23
	case "half":
		comp, mant = 2, 10
	case "bfloat":
		comp, mant = 2, 7
	}
	if comp == 0 || (t.Kind != spec.Scalar && t.Kind != spec.Vector) {
		return 0
	}
	var xs, ys []float64
	for e := 0; (e+1)*t.Size <= len(w) && (e+1)*t.Size <= len(g); e++ {
		for i := 0; i+comp <= t.Lanes*comp && i+comp <= t.Size; i += comp {
			at := e*t.Size + i
			xs = append(xs, decodeFloat(t.Scalar, w[at:at+comp]))
			ys = append(ys, decodeFloat(t.Scalar, g[at:at+comp]))
		}
	}
	largest := 0.0
	for _, x := range xs {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			largest = max(largest, math.Abs(x))
		}
	}
	_, exp := math.Frexp(largest)
	unit := math.Ldexp(1, exp-1-mant)
	if largest == 0 {
		unit = math.SmallestNonzeroFloat32
	}
	var worst int64
	for i, x := range xs {
		y := ys[i]
		switch {
		case x == y, math.IsNaN(x) && math.IsNaN(y):
			continue
		case math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0):
			return -1
		}
		worst = max(worst, int64(math.Ceil(math.Abs(x-y)/unit)))
	}
	return worst
}

// decodeFloat reads one float of the named format.
func decodeFloat(format string, b []byte) float64 {
	switch format {
	case "float":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case "half":
		return f16.ToFloat64(binary.LittleEndian.Uint16(b))
	default: // bfloat
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
	}
}

// ulpDistance is the distance between two floats of the named format in
// units in the last place, -1 when they differ in sign or class (NaN
// against a number).
func ulpDistance(format string, a, b []byte) int64 {
	var x, y float64
	var bx, by int64
	switch format {
	case "float":
		ux, uy := binary.LittleEndian.Uint32(a), binary.LittleEndian.Uint32(b)
		x, y = float64(math.Float32frombits(ux)), float64(math.Float32frombits(uy))
		bx, by = int64(ux&0x7fffffff), int64(uy&0x7fffffff)
	case "half":
		ux, uy := binary.LittleEndian.Uint16(a), binary.LittleEndian.Uint16(b)
		x, y = f16.ToFloat64(ux), f16.ToFloat64(uy)
		bx, by = int64(ux&0x7fff), int64(uy&0x7fff)
	case "bfloat":
		ux, uy := binary.LittleEndian.Uint16(a), binary.LittleEndian.Uint16(b)
		x, y = float64(math.Float32frombits(uint32(ux)<<16)), float64(math.Float32frombits(uint32(uy)<<16))
		bx, by = int64(ux&0x7fff), int64(uy&0x7fff)
	default:
		return -1
	}
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		if math.IsNaN(x) && math.IsNaN(y) {
			return 0
		}
		return -1
	case x == 0 && y == 0:
		return 0
	case math.Signbit(x) != math.Signbit(y):
		return -1
	}
	if bx > by {
		return bx - by
	}
	return by - bx
}

func TestULPDistance(t *testing.T) {
	f32 := func(v float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)) }
	u16 := func(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
	next := math.Nextafter32
	tests := []struct {
		format string
		a, b   []byte
		want   int64
	}{
		{"float", f32(1), f32(1), 0},
		{"float", f32(1), f32(next(next(1, 2), 2)), 2},
		{"float", f32(-1), f32(next(-1, -2)), 1},
		{"float", f32(0), f32(float32(math.Copysign(0, -1))), 0},
		{"float", f32(1), f32(-1), -1},
		{"float", f32(float32(math.NaN())), f32(1), -1},
		{"half", u16(0x3c00), u16(0x3c03), 3},
		{"half", u16(0x7e00), u16(0x7c01), 0},
		{"bfloat", u16(0x3f80), u16(0x3f81), 1},
		{"bfloat", u16(0x3f80), u16(0xbf80), -1},
		{"int", f32(1), f32(2), -1},
	}
	for _, tt := range tests {
		if got := ulpDistance(tt.format, tt.a, tt.b); got != tt.want {
			t.Errorf("ulpDistance(%s, % x, % x) = %d, want %d", tt.format, tt.a, tt.b, got, tt.want)
		}
	}
	// compareElems over a float2 buffer: one element differs, by 2 ulp in
	// its second component.
	typ := &spec.Type{Name: "float2", Kind: spec.Vector, Scalar: "float", Lanes: 2, Size: 8}
	w := append(append(f32(1), f32(2)...), append(f32(3), f32(4)...)...)
	g := append(append(f32(1), f32(2)...), append(f32(3), f32(next(next(4, 5), 5))...)...)
	if n, ulp, float := compareElems(typ, w, g); n != 1 || ulp != 2 || !float {
		t.Errorf("compareElems = %d, %d, %v; want 1, 2, true", n, ulp, float)
	}
	// scaledDistance: a near-zero sum that flipped its sign is a few ulp
	// of the buffer's largest value (1000: ulp 2^-14), however many of
	// its own; a NaN against a number is -1.
	f := &spec.Type{Name: "float", Kind: spec.Scalar, Scalar: "float", Lanes: 1, Size: 4}
	w = append(f32(1000), f32(0.001)...)
	g = append(f32(1000), f32(-0.001)...)
	if got := scaledDistance(f, w, g); got != 33 {
		t.Errorf("scaledDistance(1000 0.001, 1000 -0.001) = %d, want 33", got)
	}
	if got := scaledDistance(f, w, append(f32(1000), f32(float32(math.NaN()))...)); got != -1 {
		t.Errorf("scaledDistance against a NaN = %d, want -1", got)
	}
	if got := scaledDistance(f, w, w); got != 0 {
		t.Errorf("scaledDistance of equal buffers = %d", got)
	}
}
