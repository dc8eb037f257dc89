package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
	"metalab/spec"
)

// pointKernel reverses each block of 64 inputs (doubled) through
// threadgroup memory of TILE floats, whatever the threadgroup's size.
const pointKernel = `#include <metal_stdlib>
using namespace metal;

kernel void rev(device const float* in  [[buffer(0)]],
                device float*       out [[buffer(1)]],
                uint tid [[thread_position_in_threadgroup]],
                uint ntg [[threads_per_threadgroup]],
                uint tg  [[threadgroup_position_in_grid]])
{
    threadgroup float buf[TILE];
    for (uint j = tid; j < 64; j += ntg) buf[j] = in[tg * 64 + j] * 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint j = tid; j < 64; j += ntg) out[tg * 64 + j] = buf[63 - j];
}
`

// pointSpec is the baseline's spec at threads T and define TILE.
func pointSpecText(threads, tile string) string {
	return `source: k.metal
seed: 5
defines: {TILE: "` + tile + `"}
buffers:
  - {name: in, index: 0, type: float, count: 64 * G, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: out, index: 1, type: float, count: 64 * G, role: output}
stages:
  - {entry: rev, threadgroups: [G], threads: [` + threads + `]}
sets:
  quick:
    cases: [{G: 1}, {G: 3}]
`
}

// loadIn writes spec text beside k.metal in dir and loads it.
func loadIn(t *testing.T, dir, name, text string) *spec.Spec {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVariantSpec(t *testing.T) {
	be := cputest.Shared(t)
	base := setup(t, pointSpecText("64", "64"), pointKernel)
	dir := filepath.Dir(base.Path)
	other := loadIn(t, dir, "p32.yaml", pointSpecText("32", "128"))
	over := loadIn(t, dir, "p8192.yaml", pointSpecText("64", "8192"))
	shrunk := loadIn(t, dir, "pshort.yaml", strings.Replace(pointSpecText("64", "64"), "count: 64 * G, role: output", "count: 32 * G, role: output", 1))
	reseeded := loadIn(t, dir, "pseed.yaml", strings.Replace(pointSpecText("64", "64"), "seed: 5", "seed: 6", 1))
	text := []byte(pointKernel)
	vs := []Variant{
		{Name: "p32", Text: text, Spec: other},
		{Name: "p8192", Text: text, Spec: over},
		{Name: "short", Text: text, Spec: shrunk},
		{Name: "reseeded", Text: text, Spec: reseeded},
		{Name: "same", Text: text, Spec: base},
	}
	rep := run(t, Options{Spec: base, Backend: be, Variants: vs})
	if rep.Control.Status != Pass {
		t.Fatalf("control: %s %s", rep.Control.Status, rep.Control.Msg)
	}
	byName := map[string]*Result{}
	for _, r := range rep.Variants {
		byName[r.Name] = r
	}
	// Other threads and defines, the same outputs: it passes, and its
	// threadgroup memory is its own point's.
	p := byName["p32"]
	if p.Status != Pass || !p.Verified {
		t.Fatalf("p32: %s %s %s", p.Status, p.Msg, p.Log)
	}
	if len(p.TGMem) != 1 || p.TGMem[0].Before != 256 || p.TGMem[0].After != 512 || p.TGMem[0].SourceAfter != 512 {
		t.Errorf("p32 threadgroup memory %+v, want 256 → 512 bytes (source 512)", p.TGMem)
	}
	if p.Point != other.Path {
		t.Errorf("p32 point %q, want %q", p.Point, other.Path)
	}
	// The point over the limit fails before running, with its stage's
	// bytes.
	o := byName["p8192"]
	if o.Status != FailTGMem || o.Stopped != PartBuild || !strings.Contains(o.Msg, "rev: 32768 bytes of threadgroup memory, limit 16384") {
		t.Errorf("p8192: %s at %s: %s", o.Status, o.Stopped, o.Msg)
	}
	// Points that cannot be compared with the baseline's cases.
	if s := byName["short"]; s.Status != FailSpec || !strings.Contains(s.Msg, "buffer out has 32 elements (128 bytes), the baseline's 64 (256 bytes)") {
		t.Errorf("short: %s %s", s.Status, s.Msg)
	}
	if s := byName["reseeded"]; s.Status != FailSpec || !strings.Contains(s.Msg, "buffer in starts with other bytes") {
		t.Errorf("reseeded: %s %s", s.Status, s.Msg)
	}
	if s := byName["same"]; s.Status != Pass || s.Point != "" {
		t.Errorf("same: %s %s, point %q", s.Status, s.Msg, s.Point)
	}
}

// TestVariantSpecOutputs: a point whose outputs differ fails parity
// against the baseline's bytes, and the session gives the point's
// instance and programs for timing.
func TestVariantSpecOutputs(t *testing.T) {
	be := cputest.Shared(t)
	base := setup(t, pointSpecText("64", "64"), pointKernel)
	dir := filepath.Dir(base.Path)
	other := loadIn(t, dir, "p32.yaml", pointSpecText("32", "64"))
	// Other values: tripled, not doubled.
	half := []byte(strings.ReplaceAll(pointKernel, "2.0f", "3.0f"))
	ctx := context.Background()
	ss, err := NewSession(ctx, Options{Spec: base, Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	v := Variant{Name: "triple", Text: half, Spec: other}
	r, err := ss.Check(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != FailParity || r.Mismatch == nil || r.Mismatch.Buffer != "out" || r.Mismatch.Differing != 64 {
		t.Fatalf("triple: %s %s %+v", r.Status, r.Msg, r.Mismatch)
	}
	in := ss.Instances()[0]
	pin, err := ss.Instance(&v, in)
	if err != nil {
		t.Fatal(err)
	}
	if pin == in || pin.Stages[0].Threads.X != 32 || pin.Case.Name != in.Case.Name {
		t.Fatalf("point instance: threads %v, case %s", pin.Stages[0].Threads, pin.Case.Name)
	}
	if again, _ := ss.Instance(&v, in); again != pin {
		t.Error("Instance made a second instance of the same point and case")
	}
	if same, _ := ss.Instance(&Variant{Text: half}, in); same != in {
		t.Error("Instance of a variant without a spec is not the session's instance")
	}
	progs, err := ss.Programs(ctx, &v, in)
	if err != nil || len(progs) != 1 {
		t.Fatalf("programs: %v", err)
	}
	got, err := Execute(ctx, progs, pin, backend.Order{Kind: "in-order"}, ControlTimeout)
	if err != nil {
		t.Fatal(err)
	}
	// The plain build of the point, run on the point's instance, gives the
	// bytes the confirmation compared.
	if m := Compare(pin, ss.c.crefs[0], got); m == nil || m.Differing != 64 {
		t.Errorf("the point's programs give %+v against the baseline, want 64 elements differing", m)
	}
}

// TestVariantSpecHeldOut: a point is judged on held-out cases too, each
// instantiated from its own spec, and under a tolerance rule.
func TestVariantSpecHeldOut(t *testing.T) {
	be := cputest.Shared(t)
	withDomains := func(text string) string {
		return strings.Replace(text, "stages:", "domains:\n  G: {min: 1, max: 6}\nstages:", 1)
	}
	base := setup(t, withDomains(pointSpecText("64", "64")), pointKernel)
	other := loadIn(t, filepath.Dir(base.Path), "p32.yaml", withDomains(pointSpecText("32", "128")))
	rep := run(t, Options{Spec: base, Backend: be, HeldOut: 2, Seed: 9, SeedSet: true, Parity: Parity{Mode: ParityULP, ULP: 1},
		Variants: []Variant{{Name: "p32", Text: []byte(pointKernel), Spec: other}}})
	v := rep.Variants[0]
	if v.Status != Pass || v.HeldOut == nil || v.HeldOut.Judged != 2 {
		t.Fatalf("p32: %s %s, held out %+v", v.Status, v.Msg, v.HeldOut)
	}
	if v.Tolerance == nil || !v.Tolerance.Bitwise || v.Tolerance.Rule != "ulp=1" {
		t.Errorf("p32 tolerance %+v, want bitwise under ulp=1", v.Tolerance)
	}
	if rep.Parity != "ulp=1" {
		t.Errorf("report parity %q", rep.Parity)
	}
}

// TestVariantSpecDynamicTG: the threadgroup memory a point binds through
// the spec's threadgroup buffers counts toward the limit with its static
// memory.
func TestVariantSpecDynamicTG(t *testing.T) {
	be := cputest.Shared(t)
	kernel := `#include <metal_stdlib>
using namespace metal;

kernel void k(device const float* in  [[buffer(0)]],
              device float*       out [[buffer(1)]],
              threadgroup float*  sh  [[threadgroup(0)]],
              uint tid [[thread_position_in_threadgroup]])
{
    threadgroup float st[16];
    sh[tid] = in[tid];
    st[tid % 16] = 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = sh[63 - tid] + st[tid % 16];
}
`
	specText := func(floats string) string {
		return `source: k.metal
seed: 2
buffers:
  - {name: in, index: 0, type: float, count: 64, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: out, index: 1, type: float, count: 64, role: output}
  - {name: sh, index: 0, type: float, count: ` + floats + `, role: threadgroup}
stages:
  - {entry: k, threadgroups: [1], threads: [64]}
sets:
  quick:
    cases: [{}]
`
	}
	base := setup(t, specText("64"), kernel)
	dir := filepath.Dir(base.Path)
	fits := loadIn(t, dir, "fits.yaml", specText("1024"))
	over := loadIn(t, dir, "over.yaml", specText("4096"))
	text := []byte(kernel)
	rep := run(t, Options{Spec: base, Backend: be, Variants: []Variant{{Name: "fits", Text: text, Spec: fits}, {Name: "over", Text: text, Spec: over}}})
	if rep.Control.Status != Pass || len(rep.Control.TGMem) != 1 || rep.Control.TGMem[0].DynamicBefore != 256 {
		t.Fatalf("control %s %s, tg %+v", rep.Control.Status, rep.Control.Msg, rep.Control.TGMem)
	}
	f := rep.Variants[0]
	if f.Status != Pass || len(f.TGMem) != 1 || f.TGMem[0].After != 64 || f.TGMem[0].DynamicBefore != 256 || f.TGMem[0].DynamicAfter != 4096 {
		t.Errorf("fits: %s %s, tg %+v", f.Status, f.Msg, f.TGMem)
	}
	o := rep.Variants[1]
	if o.Status != FailTGMem || o.Msg != "k: 16448 bytes of threadgroup memory (64 static, 16384 bound by the spec's threadgroup buffers), limit 16384" {
		t.Errorf("over: %s %q", o.Status, o.Msg)
	}
}
