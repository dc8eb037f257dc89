package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend/fake"
	"metalab/spec"
)

const testSpec = `source: k.metal
seed: 3
buffers:
  - {name: in, index: 0, type: float, count: N, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: out, index: 1, type: float, count: N, shape: [2, N / 2], role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [N]}
sets:
  quick:
    cases: [{N: 16}, {N: 32}]
`

// setup writes a spec and its baseline and loads the spec.
func setup(t *testing.T, specText, baseline string) *spec.Spec {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "k.metal"), []byte(baseline), 0o666); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "k.yaml")
	if err := os.WriteFile(path, []byte(specText), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func variant(name, text string) Variant {
	return Variant{Name: name, Path: name + ".metal", Text: []byte(text)}
}

// run runs the check and fails t unless the report has a control and one
// result per variant, in order, so that tests may index them.
func run(t *testing.T, opts Options) *Report {
	t.Helper()
	if opts.Backend == nil {
		opts.Backend = fake.New()
	}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Control == nil || len(rep.Variants) != len(opts.Variants) {
		t.Fatalf("report has control %v and %d results for %d variants", rep.Control, len(rep.Variants), len(opts.Variants))
	}
	for i, v := range opts.Variants {
		if want := cmpOr(v.Name, filepath.Base(v.Path)); rep.Variants[i].Name != want {
			t.Fatalf("result %d is for %q, want %q", i, rep.Variants[i].Name, want)
		}
	}
	return rep
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// mismatchOf returns r's mismatch, failing t when there is none.
func mismatchOf(t *testing.T, r *Result) *Mismatch {
	t.Helper()
	if r.Mismatch == nil {
		t.Fatalf("%s: status %s (%s) and no mismatch, want a reported difference", r.Name, r.Status, r.Msg)
	}
	return r.Mismatch
}

func TestVariants(t *testing.T) {
	s := setup(t, testSpec, "// fake: copy 0 1\n")
	rep := run(t, Options{Spec: s, Variants: []Variant{
		variant("same", "// a comment\n// fake: copy 0 1\n"),
		variant("poke", "// fake: copy 0 1\n// fake: poke 1 12 0x7f\n"),
		variant("big", "// fake: copy 0 1\n// fake: tgmem 20000\n"),
		variant("broken", "// fake: compile-error expected ';'\n"),
		variant("crash", "// fake: crash\n"),
		variant("tail", "// fake: copy 0 1\n// fake: poke 1 60 0\n"),
		variant("oob", "// fake: copy 0 1\n// fake: poke 1 127 0\n"),
	}})
	if rep.Control.Status != Pass {
		t.Fatalf("control = %s %s", rep.Control.Status, rep.Control.Msg)
	}
	want := map[string]Status{"same": Pass, "poke": FailParity, "big": FailTGMem, "broken": CompileError, "crash": Crash, "tail": FailParity, "oob": BadAccess}
	for _, v := range rep.Variants {
		if v.Status != want[v.Name] {
			t.Errorf("%s: status %s, want %s (%s)", v.Name, v.Status, want[v.Name], v.Msg)
		}
	}
	if rep.OK() {
		t.Error("report OK with failing variants")
	}
	byName := map[string]*Result{}
	for _, v := range rep.Variants {
		byName[v.Name] = v
	}
	// run checked that there is one result per variant, by name.

	// The parity report names the first differing element with its
	// coordinates and both values decoded by type.
	in, err := s.Instantiate(mustCases(t, s)[0])
	if err != nil {
		t.Fatal(err)
	}
	typ := in.Buffer("in").Type
	m := mismatchOf(t, byName["poke"])
	wantVal := spec.FormatElement(typ, in.Buffer("in").Data[12:16])
	gotBytes := append([]byte{0x7f}, in.Buffer("in").Data[13:16]...)
	if m.Buffer != "out" || m.Element != 3 || len(m.Coords) != 2 || m.Coords[0] != 0 || m.Coords[1] != 3 ||
		m.Want != wantVal || m.Got != spec.FormatElement(typ, gotBytes) || m.Differing != 1 || m.Case != "quick/N=16" {
		t.Errorf("poke mismatch = %+v, want element 3 at [0 3], want %s", m, wantVal)
	}
	if n := len(byName["poke"].Cases); n != 2 {
		t.Errorf("poke ran %d cases, want both", n)
	}
	// Byte 60 is element 15 of 16, the last one, at [1 7].
	if m := mismatchOf(t, byName["tail"]); m.Case != "quick/N=16" || m.Element != 15 || len(m.Coords) != 2 || m.Coords[0] != 1 || m.Coords[1] != 7 || m.Differing != 1 {
		t.Errorf("tail mismatch = %+v, want the last element of case N=16, at [1 7]", m)
	}
	// Byte 127 is out of bounds in the first case: the variant stops there.
	if o := byName["oob"]; len(o.Cases) != 1 || o.Cases[0].Status != BadAccess || !strings.Contains(o.Msg, "offset 127") {
		t.Errorf("oob = %+v", o)
	}
	if tg := byName["big"].TGMem; len(tg) != 1 || tg[0].Before != 0 || tg[0].After != 20000 || tg[0].SourceAfter != -1 {
		t.Errorf("big tg memory = %+v", tg)
	}
	if len(byName["big"].Cases) != 0 {
		t.Error("a variant over the threadgroup memory limit was run")
	}
	if b := byName["broken"]; !strings.Contains(b.Log, "expected ';'") {
		t.Errorf("compile error log = %q", b.Log)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"control", "fail-parity", "fail-tgmem", "0→20000", "buffer out[0 3] (element 3, float)", "1 of 16 elements differ", "expected ';'"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Variants) != 7 || back.Control == nil || back.Control.Status != Pass || back.Variants[1].Mismatch == nil || back.Variants[1].Mismatch.Element != 3 {
		t.Errorf("JSON round trip lost data: %s", js.String())
	}
}

func mustCases(t *testing.T, s *spec.Spec) []spec.Case {
	cs, err := s.Cases()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestTGLimit(t *testing.T) {
	s := setup(t, testSpec, "// fake: copy 0 1\n// fake: tgmem 512\n")
	v := variant("mid", "// fake: copy 0 1\n// fake: tgmem 9000\n")
	for _, tt := range []struct {
		limit int
		want  Status
	}{{8192, FailTGMem}, {16384, Pass}, {9000, Pass}} {
		rep := run(t, Options{Spec: s, TGLimit: tt.limit, Variants: []Variant{v}})
		if got := rep.Variants[0].Status; got != tt.want {
			t.Errorf("limit %d: %s, want %s", tt.limit, got, tt.want)
		}
		if tg := rep.Variants[0].TGMem; len(tg) != 1 || tg[0].Before != 512 || tg[0].After != 9000 {
			t.Errorf("variant tg memory = %+v, want 512→9000", tg)
		}
		if tg := rep.Control.TGMem; len(tg) != 1 || tg[0].Before != 512 || tg[0].After != 512 {
			t.Errorf("control tg memory = %+v, want 512→512", tg)
		}
	}
}

func TestControlFails(t *testing.T) {
	s := setup(t, testSpec, "// fake: copy 0 1\n// fake: nondeterministic 1\n")
	rep := run(t, Options{Spec: s, Variants: []Variant{variant("v", "// fake: copy 0 1\n")}})
	if rep.Control.Status != FailNondet || rep.Control.Mismatch == nil || rep.Control.Mismatch.Buffer != "out" {
		t.Errorf("control = %+v", rep.Control)
	}
	if rep.Variants[0].Status != NotJudged || rep.OK() {
		t.Errorf("variant after failed control = %s, OK %v", rep.Variants[0].Status, rep.OK())
	}
	s = setup(t, testSpec, "// fake: crash\n")
	rep = run(t, Options{Spec: s, Variants: []Variant{variant("v", "// fake: copy 0 1\n")}})
	if rep.Control.Status != Crash || rep.Variants[0].Status != NotJudged {
		t.Errorf("crashing baseline: control %s, variant %s", rep.Control.Status, rep.Variants[0].Status)
	}
}

func TestRace(t *testing.T) {
	base := "// fake: copy 0 1\n// fake: poke 1 0 0\n"
	s := setup(t, testSpec, base)
	racy := variant("racy", "// fake: copy 0 1\n// fake: order 1\n")
	rep := run(t, Options{Spec: s, Variants: []Variant{racy}})
	if rep.Variants[0].Status != Pass {
		t.Errorf("without the race probe: %s, want pass", rep.Variants[0].Status)
	}
	rep = run(t, Options{Spec: s, Race: true, Variants: []Variant{racy, variant("calm", base)}})
	if v := rep.Variants[0]; v.Status != FailRace || v.Mismatch == nil || v.Mismatch.Order != "reversed" {
		t.Errorf("racy under the race probe: %+v", v)
	}
	if v := rep.Variants[1]; v.Status != Pass {
		t.Errorf("calm under the race probe: %s", v.Status)
	}
	s = setup(t, testSpec, "// fake: copy 0 1\n// fake: order 1\n")
	rep = run(t, Options{Spec: s, Race: true, Variants: []Variant{racy}})
	if rep.Control.Status != FailRace || rep.Variants[0].Status != NotJudged {
		t.Errorf("racy baseline: control %s, variant %s", rep.Control.Status, rep.Variants[0].Status)
	}
}

func TestPipeline(t *testing.T) {
	const pipe = `source: k.metal
buffers:
  - {name: in, index: 0, type: half, count: 8, role: input, gen: {kind: iota, start: 1}}
  - {name: mid, type: half, count: 8, role: output}
  - {name: out, index: 1, type: half, count: 8, role: output}
stages:
  - {entry: prep, threadgroups: [1], threads: [8], buffers: [in], bind: {mid: 2}}
  - {entry: score, threadgroups: [1], threads: [8], buffers: [out], bind: {mid: 0}}
sets:
  s:
    cases: [{}]
`
	base := "// fake[prep]: copy 0 2\n// fake[prep]: add 0 2\n// fake[score]: copy 0 1\n"
	s := setup(t, pipe, base)
	in, err := s.Instantiate(mustCases(t, s)[0])
	if err != nil {
		t.Fatal(err)
	}
	be := fake.New()
	var progs []backendProgram
	for _, st := range in.Stages {
		p, err := be.Compile(context.Background(), sourceOf(st, base))
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, p)
	}
	out, err := Execute(context.Background(), progs, in, DefaultOrders[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 16)
	for i := range want {
		want[i] = 2 * in.Buffer("in").Data[i]
	}
	if !bytes.Equal(out["mid"], want) || !bytes.Equal(out["out"], want) {
		t.Errorf("pipeline: mid % x, out % x, want % x", out["mid"], out["out"], want)
	}
	rep := run(t, Options{Spec: s, Variants: []Variant{
		variant("same", base),
		variant("skip-add", "// fake[prep]: copy 0 2\n// fake[score]: copy 0 1\n"),
	}})
	if rep.Control.Status != Pass || rep.Variants[0].Status != Pass || rep.Variants[1].Status != FailParity {
		t.Errorf("pipeline statuses: control %s, same %s, skip-add %s", rep.Control.Status, rep.Variants[0].Status, rep.Variants[1].Status)
	}
	if m := mismatchOf(t, rep.Variants[1]); m.Buffer != "mid" || m.Element != 0 || m.Differing != 8 {
		t.Errorf("skip-add mismatch = %+v", m)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"prep 0, score 0", "unchanged, max 0"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("pipeline table lacks %q:\n%s", want, text.String())
		}
	}
}

func TestVariantOfSecondSource(t *testing.T) {
	const pipe = `source: k.metal
buffers:
  - {name: in, index: 0, type: uchar, count: 4, role: input, gen: {kind: iota}}
  - {name: out, index: 1, type: uchar, count: 4, role: output}
stages:
  - {entry: prep, source: p.metal, threadgroups: [1], threads: [4]}
  - {entry: score, threadgroups: [1], threads: [4]}
sets:
  s:
    cases: [{}]
`
	s := setup(t, pipe, "// fake: add 0 1\n")
	prep := filepath.Join(s.Dir, "p.metal")
	if err := os.WriteFile(prep, []byte("// fake: copy 0 1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	rep := run(t, Options{Spec: s, Variants: []Variant{
		{Name: "prep-same", Text: []byte("// fake: copy 0 1\n// reordered\n"), Base: prep},
		{Name: "prep-fill", Text: []byte("// fake: fill 1 0\n"), Base: prep},
	}})
	if rep.Control.Status != Pass || rep.Variants[0].Status != Pass || rep.Variants[1].Status != FailParity {
		t.Fatalf("statuses: control %s, prep-same %s, prep-fill %s", rep.Control.Status, rep.Variants[0].Status, rep.Variants[1].Status)
	}
	// Baseline: out = in + in = 0 2 4 6; prep-fill: out = in = 0 1 2 3.
	if m := mismatchOf(t, rep.Variants[1]); m.Element != 1 || m.Differing != 3 || m.Want != "2 (0x02)" || m.Got != "1 (0x01)" {
		t.Errorf("prep-fill mismatch = %+v", m)
	}
	if tg := rep.Variants[0].TGMem; len(tg) != 1 || tg[0].Entry != "prep" {
		t.Errorf("tg memory rows = %+v, want only the replaced source's stage", tg)
	}
	if _, err := Run(context.Background(), Options{Spec: s, Backend: fake.New(), Variants: []Variant{{Name: "x", Base: "nowhere.metal"}}}); err == nil {
		t.Error("a variant of a source no stage runs: no error")
	}
}

func TestSourceEstimate(t *testing.T) {
	const kernel = `// fake: copy 0 1
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    threadgroup float s[N];
    s[i] = in[i];
    out[i] = s[i];
}
`
	s := setup(t, strings.Replace(testSpec, "stages:", "defines: {N: \"64\"}\nstages:", 1), kernel)
	wider := strings.Replace(kernel, "s[N]", "s[2 * N]", 1)
	rep := run(t, Options{Spec: s, Variants: []Variant{variant("wider", wider)}})
	tg := rep.Variants[0].TGMem
	if len(tg) != 1 || tg[0].SourceBefore != 256 || tg[0].SourceAfter != 512 {
		t.Errorf("source estimate = %+v, want 256→512 from the defines", tg)
	}
}

func TestCompareNamesEveryDifferingBuffer(t *testing.T) {
	f32, _ := spec.LookupType("float")
	h16, _ := spec.LookupType("half")
	in := &spec.Instance{Case: spec.Case{Set: "s", Name: "c"}, Buffers: []*spec.Buffer{
		{Name: "in", Type: f32, Count: 2, Role: spec.Input},
		{Name: "a", Type: f32, Count: 2, Shape: []int{1, 2}, Role: spec.Output},
		{Name: "b", Type: h16, Count: 4, Role: spec.Output},
		{Name: "c", Type: h16, Count: 1, Role: spec.InOut},
		{Name: "d", Type: h16, Count: 1, Role: spec.Output},
	}}
	want := map[string][]byte{"in": make([]byte, 8), "a": make([]byte, 8), "b": make([]byte, 8), "c": {0, 0}, "d": {0, 0}}
	got := map[string][]byte{"in": make([]byte, 8), "a": make([]byte, 8), "b": {0, 0, 0, 0x80, 0, 0, 0x00, 0x3c}, "c": {0, 0}, "d": {1, 0}}
	m := Compare(in, want, got)
	if m == nil {
		t.Fatal("no mismatch")
	}
	if m.Buffer != "b" || m.Element != 1 || m.Differing != 2 || m.Elements != 4 || m.Want != "0 (0x0000)" || m.Got != "-0 (0x8000)" {
		t.Errorf("mismatch = %+v, want b[1]: 0 → -0, 2 of 4", m)
	}
	if strings.Join(m.Others, ",") != "d" {
		t.Errorf("other buffers = %v, want [d]", m.Others)
	}
	if s := m.String(); !strings.HasSuffix(s, "; 2 of 4 elements differ; also differ: d") {
		t.Errorf("String() = %q", s)
	}
	// A write into an input buffer is a difference too.
	got["in"] = []byte{0, 0, 0, 0, 0, 0, 0x80, 0x3f}
	if m := Compare(in, want, got); m == nil || m.Buffer != "in" || len(m.Coords) != 1 || m.Coords[0] != 1 || strings.Join(m.Others, ",") != "b,d" {
		t.Errorf("written input: mismatch %+v, want in[1], also b and d", m)
	}
	if m := Compare(in, want, want); m != nil {
		t.Errorf("equal outputs: %+v", m)
	}
}

// TestCompareEveryBufferEveryElement changes one byte of one element of
// one buffer at a time, for every buffer whatever its role and for its
// first and last element: each change alone is a mismatch that names the
// buffer and the element.
func TestCompareEveryBufferEveryElement(t *testing.T) {
	f32, _ := spec.LookupType("float")
	h16, _ := spec.LookupType("half")
	i8, _ := spec.LookupType("char")
	in := &spec.Instance{Case: spec.Case{Set: "s", Name: "c"}, Buffers: []*spec.Buffer{
		{Name: "x", Type: f32, Count: 3, Role: spec.Input},
		{Name: "cache", Type: i8, Count: 5, Shape: []int{5}, Role: spec.InOut},
		{Name: "scales", Type: h16, Count: 6, Shape: []int{2, 3}, Role: spec.InOut},
		{Name: "y", Type: f32, Count: 4, Shape: []int{2, 2}, Role: spec.Output},
		{Name: "tg", Type: f32, Count: 4, Role: spec.Threadgroup},
	}}
	want := map[string][]byte{}
	for i, b := range in.Buffers {
		if b.Role == spec.Threadgroup {
			continue
		}
		want[b.Name] = make([]byte, b.Count*b.Type.Size)
		for j := range want[b.Name] {
			want[b.Name][j] = byte(17*i + j)
		}
	}
	for _, b := range in.Buffers {
		if b.Role == spec.Threadgroup {
			continue
		}
		for _, e := range []int{0, b.Count - 1} {
			// The element's last byte, so a comparison that stops one
			// byte short is caught as well.
			at := (e+1)*b.Type.Size - 1
			t.Run(fmt.Sprintf("%s/%s/%d", b.Role, b.Name, e), func(t *testing.T) {
				got := map[string][]byte{}
				for k, v := range want {
					got[k] = bytes.Clone(v)
				}
				got[b.Name][at] ^= 0x80
				m := Compare(in, want, got)
				if m == nil {
					t.Fatalf("byte %d of %s (%s) changed: no mismatch", at, b.Name, b.Role)
				}
				if m.Buffer != b.Name || m.Element != e || m.Differing != 1 || m.Elements != b.Count || len(m.Others) != 0 || m.Want == m.Got {
					t.Errorf("mismatch = %+v, want %s element %d alone", m, b.Name, e)
				}
				if wantCoords := b.Coords(e); fmt.Sprint(m.Coords) != fmt.Sprint(wantCoords) {
					t.Errorf("coords %v, want %v", m.Coords, wantCoords)
				}
			})
		}
	}
	// Threadgroup memory is not a device buffer: it has no bytes to compare.
	if m := Compare(in, want, want); m != nil {
		t.Errorf("equal buffers: %+v", m)
	}
}

// TestInOutParity checks a variant whose only difference from the
// baseline is one byte of an inout buffer (a cache the kernel updates in
// place, read by no later stage): it fails parity, naming that buffer.
func TestInOutParity(t *testing.T) {
	const inout = `source: k.metal
buffers:
  - {name: in, index: 0, type: float, count: 8, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: cache, index: 1, type: char, count: 16, shape: [4, 4], role: inout, gen: {kind: randint, min: -127, max: 127}}
  - {name: out, index: 2, type: float, count: 8, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [8]}
sets:
  s:
    cases: [{}]
`
	s := setup(t, inout, "// fake: copy 0 2\n// fake: poke 1 5 7\n")
	rep := run(t, Options{Spec: s, Variants: []Variant{
		variant("same", "// fake: poke 1 5 7\n// fake: copy 0 2\n"),
		variant("cache-byte", "// fake: copy 0 2\n// fake: poke 1 5 7\n// fake: poke 1 14 0x80\n"),
	}})
	if rep.Control.Status != Pass || rep.Variants[0].Status != Pass {
		t.Fatalf("control %s, same %s; want both to pass", rep.Control.Status, rep.Variants[0].Status)
	}
	r := rep.Variants[1]
	if r.Status != FailParity {
		t.Fatalf("a variant that changes one byte of an inout buffer: %s, want %s", r.Status, FailParity)
	}
	if m := mismatchOf(t, r); m.Buffer != "cache" || m.Element != 14 || fmt.Sprint(m.Coords) != "[3 2]" || m.Differing != 1 || len(m.Others) != 0 {
		t.Errorf("mismatch = %+v, want cache[3 2] alone", m)
	}
}

// TestExecuteStagesAndTotals runs the first stage of a pipeline alone,
// from programs of that stage only, and reads each stage's timing sample.
func TestExecuteStagesAndTotals(t *testing.T) {
	const pipe = `source: k.metal
buffers:
  - {name: in, index: 0, type: half, count: 8, role: input, gen: {kind: iota, start: 1}}
  - {name: mid, type: half, count: 8, role: output}
  - {name: out, index: 1, type: half, count: 8, role: output}
stages:
  - {entry: prep, threadgroups: [1], threads: [8], buffers: [in], bind: {mid: 2}}
  - {entry: score, threadgroups: [1], threads: [8], buffers: [out], bind: {mid: 0}}
sets:
  s:
    cases: [{}]
`
	base := "// fake[prep]: copy 0 2\n// fake[prep]: time 3ms\n// fake[score]: copy 0 1\n// fake[score]: time 5ms\n"
	s := setup(t, pipe, base)
	ctx := context.Background()
	ss, err := NewSession(ctx, Options{Spec: s, Backend: fake.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	in := ss.Instances()[0]
	all, err := ss.Programs(ctx, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ExecuteCase(ctx, all, in, ExecOptions{Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Stages) != 2 || ex.Stages[0].Total != 6*time.Millisecond || ex.Stages[1].Total != 10*time.Millisecond {
		t.Fatalf("stage totals = %+v, want 6ms and 10ms (two dispatches each)", ex.Stages)
	}
	first, err := ss.StagePrograms(ctx, nil, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 {
		t.Fatalf("StagePrograms(1) = %d programs", len(first))
	}
	ex, err = ExecuteCase(ctx, first, in, ExecOptions{Stages: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Stages) != 1 || ex.Stages[0].Entry != "prep" || ex.Stages[0].Total != 3*time.Millisecond {
		t.Errorf("first stage only: %+v", ex.Stages)
	}
	if !bytes.Equal(ex.Outputs["mid"], ex.Outputs["in"][:16]) || bytes.Equal(ex.Outputs["out"], ex.Outputs["mid"]) {
		t.Errorf("first stage only: the second stage ran or the first did not: mid % x, out % x", ex.Outputs["mid"], ex.Outputs["out"])
	}
	if _, err := ExecuteCase(ctx, first, in, ExecOptions{}); err == nil {
		t.Error("ExecuteCase ran every stage with the first stage's program only")
	}
	if _, err := ExecuteCase(ctx, all, in, ExecOptions{Stages: 3}); err == nil {
		t.Error("ExecuteCase ran 3 stages of a 2-stage case")
	}
	if _, err := ss.StagePrograms(ctx, nil, in, 3); err == nil {
		t.Error("StagePrograms compiled 3 stages of a 2-stage case")
	}
}

// TestJobs: variants checked several at once get the verdicts, and the
// order, of the variants checked one at a time.
func TestJobs(t *testing.T) {
	s := setup(t, testSpec, "// fake: copy 0 1\n")
	var vs []Variant
	for i := range 12 {
		switch i % 4 {
		case 0:
			vs = append(vs, variant(fmt.Sprintf("same%d", i), fmt.Sprintf("// %d\n// fake: copy 0 1\n", i)))
		case 1:
			vs = append(vs, variant(fmt.Sprintf("poke%d", i), fmt.Sprintf("// fake: copy 0 1\n// fake: poke 1 %d 0x7f\n", 4*i)))
		case 2:
			vs = append(vs, variant(fmt.Sprintf("crash%d", i), fmt.Sprintf("// %d\n// fake: crash\n", i)))
		default:
			vs = append(vs, variant(fmt.Sprintf("broken%d", i), fmt.Sprintf("// %d\n// fake: compile-error expected ';'\n", i)))
		}
	}
	one := run(t, Options{Spec: s, Variants: vs})
	many := run(t, Options{Spec: s, Variants: vs, Jobs: 4})
	for i := range vs {
		a, b := one.Variants[i], many.Variants[i]
		if a.Status != b.Status || a.Msg != b.Msg {
			t.Errorf("%s: %s (%s) with 4 jobs, %s (%s) with one", vs[i].Name, b.Status, b.Msg, a.Status, a.Msg)
		}
	}
	// Cancelled: the variants judged before the first one left out stand,
	// and no later one.
	ctx, cancel := context.WithCancel(context.Background())
	rep, err := Run(ctx, Options{Spec: s, Backend: fake.New(), Variants: vs, Jobs: 3, Progress: func(msg string) {
		if strings.HasPrefix(msg, "same4:") {
			cancel()
		}
	}})
	if err == nil || rep == nil {
		t.Fatalf("cancelled run: report %v, error %v; want the partial report and the error", rep, err)
	}
	if len(rep.Variants) >= len(vs) {
		t.Errorf("cancelled run judged all %d variants", len(rep.Variants))
	}
	for i, r := range rep.Variants {
		if r.Name != vs[i].Name {
			t.Errorf("cancelled run's result %d is %s, want %s", i, r.Name, vs[i].Name)
		}
	}
}
