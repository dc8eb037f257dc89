package check_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend/cpu"
	"metalab/backend/cpu/cputest"
	"metalab/check"
	"metalab/spec"
)

// The tests in this file plant known faults in the bundled qsa kernels and
// run the real check pipeline on the cpu backend: each fault must be caught
// with a report precise enough to act on, and a benign change must pass.

// cpuBackend returns the shared cpu backend, or skips t when it cannot run
// here.
func cpuBackend(t *testing.T) *cpu.Backend { return cputest.Shared(t) }

// edit returns src with the only occurrence of old replaced by new, as a
// byte-range edit; it fails t when old is missing or ambiguous, so that a
// change to the kernel makes this test fail loudly instead of planting
// nothing.
func edit(t *testing.T, src []byte, old, new string) []byte {
	t.Helper()
	i := bytes.Index(src, []byte(old))
	if i < 0 {
		t.Fatalf("planted edit: %q not found in the kernel", old)
	}
	if n := bytes.Count(src, []byte(old)); n != 1 {
		t.Fatalf("planted edit: %q occurs %d times in the kernel, want once", old, n)
	}
	out := make([]byte, 0, len(src)-len(old)+len(new))
	out = append(out, src[:i]...)
	out = append(out, new...)
	return append(out, src[i+len(old):]...)
}

// Texts the planted variants change in kernels/qsa_prompt.metal.
const (
	// qsa_flash's round 4: ((s0 + s1) + (s2 + s3)) * scale, with ss
	// holding s0 + s1 and sp[0], sp[1] holding s2, s3.
	combineSum      = "float s = (ss[c] + (sp[0][c] + sp[1][c])) * p.scale;"
	combineReorderd = "float s = ((ss[c] + sp[0][c]) + sp[1][c]) * p.scale;"
	// The barrier between round 1 (s0, s1 published) and round 2 (read).
	round1Barrier = "        threadgroup_barrier(mem_flags::mem_threadgroup);\n\n        // Round 2:"
	round2NoBarr  = "\n        // Round 2:"
	// qsa_score's causal guard on the coalesced write.
	causalGuard = "col * 64 <= p.pos0 + t)"
	causalLeaky = "col * 64 <= p.pos0 + t + 64)"
	// qsa_flash's denominator loop.
	denomLoop     = "            for (uint c = 0; c < 64; ++c) {\n                l_run += P[c];"
	denomUnrolled = "            #pragma clang loop unroll(full)\n" + denomLoop
	// qsa_flash's V staging array, 4 KiB; four times as large it pushes
	// the kernel to 19472 bytes.
	vStage    = "threadgroup char4  vt[32][32];"
	vStageBig = "threadgroup char4  vt[32][128];"
	// qsa_flash's last barrier, moved into thread 0's branch.
	finalPublish   = "    if (tid == 0) {\n        stat[1] = l_run;\n    }\n"
	divergentBarr  = "    if (tid == 0) {\n        stat[1] = l_run;\n        threadgroup_barrier(mem_flags::mem_threadgroup);\n    }\n"
	flashStore     = "    const float l = stat[1];\n    out[((size_t)t * p.H + h) * 128 + tid] ="
	flashStorePast = "    const float l = stat[1];\n    out[((size_t)t * p.H + h) * 128 + tid + 64] ="
	// qsa_prep's store of a value quantisation scale into the KV cache
	// (vsc, an inout buffer), and a fault that flips its sign for value
	// head 0's first group at the batch's first cell. No later stage reads
	// vsc: only the comparison of inout buffers can see it.
	vscStore        = "vsc[r * 4 + (d >> 5)] = sh;"
	vscStoreFlipped = "vsc[r * 4 + (d >> 5)] = (t == 0 && kh == 0 && d == 0) ? -sh : sh;"
	// A statement of qsa_flash, made a syntax error.
	corrStmt   = "const float corr = stat[0];"
	corrBroken = "const float corr = stat[0]"
)

// loadPrompt loads the bundled prompt spec and its kernel.
func loadPrompt(t *testing.T) (*spec.Spec, []byte) { return loadSpec(t, "qsa_prompt.yaml") }

// loadSpec loads the bundled spec kernels/name and its main source.
func loadSpec(t *testing.T, name string) (*spec.Spec, []byte) {
	t.Helper()
	s, err := spec.Load(filepath.Join("..", "kernels", name))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(s.Source)
	if err != nil {
		t.Fatal(err)
	}
	return s, src
}

func TestPlantedVariants(t *testing.T) {
	b := cpuBackend(t)
	s, src := loadPrompt(t)
	v := func(name string, text []byte) check.Variant {
		return check.Variant{Name: name, Path: name + ".metal", Text: text}
	}
	variants := []check.Variant{
		v("broken", edit(t, src, corrStmt, corrBroken)),
		v("reordered", edit(t, src, combineSum, combineReorderd)),
		v("no-barrier", edit(t, src, round1Barrier, round2NoBarr)),
		v("leaky", edit(t, src, causalGuard, causalLeaky)),
		v("big", edit(t, src, vStage, vStageBig)),
		v("divergent-barrier", edit(t, src, finalPublish, divergentBarr)),
		v("out-of-bounds", edit(t, src, flashStore, flashStorePast)),
		v("unrolled", edit(t, src, denomLoop, denomUnrolled)),
	}
	start := time.Now()
	rep, err := check.Run(context.Background(), check.Options{
		Spec: s, Backend: b, Sets: []string{"quick"}, Variants: variants, Timeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %d variants in %v:\n%s", len(variants), time.Since(start).Round(time.Millisecond), &text)
	if rep.Control.Status != check.Pass {
		t.Fatalf("control: %s %s", rep.Control.Status, rep.Control.Msg)
	}
	if rep.OK() {
		t.Error("report OK with planted faults")
	}
	got := map[string]*check.Result{}
	for _, r := range rep.Variants {
		got[r.Name] = r
	}
	want := map[string]check.Status{
		"broken": check.CompileError, "reordered": check.FailParity, "no-barrier": check.FailRace,
		"leaky": check.FailParity, "big": check.FailTGMem, "unrolled": check.Pass,
		"divergent-barrier": check.Deadlock, "out-of-bounds": check.BadAccess,
	}
	for name, st := range want {
		r := got[name]
		if r == nil {
			t.Errorf("%s: no result", name)
			continue
		}
		if r.Status != st {
			t.Errorf("%s: status %s, want %s (%s)", name, r.Status, st, r.Msg)
		}
	}

	// A compile error is the variant's result, with the compiler's log;
	// the variants after it were still judged (checked above).
	if r := got["broken"]; r != nil && (r.Log == "" || len(r.Cases) != 0) {
		t.Errorf("broken: log %q, %d cases run; want a log and no case", r.Log, len(r.Cases))
	}

	// A kernel that hangs on a barrier or writes past a buffer stops at its
	// first case; the report names the case and, for a bad access, which
	// buffer the backend's index is.
	for _, name := range []string{"divergent-barrier", "out-of-bounds"} {
		r := got[name]
		if r == nil || len(r.Cases) != 1 || r.Cases[0].Status != r.Status {
			t.Errorf("%s: cases %+v, want the first case only, failed", name, r)
			continue
		}
		if !strings.Contains(text.String(), "  case "+r.Cases[0].Case+": "+string(r.Status)) {
			t.Errorf("%s: the text report does not name the failing case %s", name, r.Cases[0].Case)
		}
	}
	if r := got["out-of-bounds"]; r != nil && !strings.Contains(r.Msg, "out-of-bounds write of buffer out (index 6), byte 8192, 0 bytes past its end") {
		t.Errorf("out-of-bounds: msg %q does not name the buffer and how far past its end", r.Msg)
	}
	// The dropped barrier is seen by the checking mode, not by luck: the
	// report names the threadgroup array, the element and the read's line.
	if r := got["no-barrier"]; r != nil && !(strings.Contains(r.Msg, "race on threadgroup array sp[1][0]") && strings.Contains(r.Msg, "no-barrier.metal:172") && strings.Contains(r.Msg, "no-barrier.metal:183")) {
		t.Errorf("no-barrier: msg %q does not name the array, element and both lines", r.Msg)
	}

	// Parity failures name the buffer, the coordinates of the first
	// differing element in the buffer's shape, both values decoded, and
	// how many elements differ.
	in := instances(t, s, "quick")
	for _, tt := range []struct {
		name, buffer string
	}{{"reordered", "out"}, {"leaky", "scores"}} {
		r := got[tt.name]
		if r == nil || r.Mismatch == nil {
			t.Errorf("%s: no mismatch reported", tt.name)
			continue
		}
		m := r.Mismatch
		inst := in[m.Case]
		if inst == nil {
			t.Errorf("%s: mismatch in case %q, which is not a case of the quick set", tt.name, m.Case)
			continue
		}
		buf := inst.Buffer(m.Buffer)
		if m.Buffer != tt.buffer || buf == nil {
			t.Errorf("%s: mismatch in buffer %q, want %q", tt.name, m.Buffer, tt.buffer)
			continue
		}
		if len(m.Coords) != len(buf.Shape) || m.Element < 0 || m.Element >= buf.Count {
			t.Errorf("%s: coords %v element %d, want a coordinate per dimension of %v", tt.name, m.Coords, m.Element, buf.Shape)
			continue
		}
		flat := 0
		for d, c := range m.Coords {
			flat = flat*buf.Shape[d] + c
		}
		if flat != m.Element {
			t.Errorf("%s: coords %v are element %d, report says %d", tt.name, m.Coords, flat, m.Element)
		}
		if m.Want == "" || m.Got == "" || m.Want == m.Got || !strings.Contains(m.Want, "0x") {
			t.Errorf("%s: values want %q got %q; want both decoded with their bytes, and different", tt.name, m.Want, m.Got)
		}
		if m.Differing < 1 || m.Differing > m.Elements || m.Elements != buf.Count {
			t.Errorf("%s: %d of %d elements differ (buffer has %d)", tt.name, m.Differing, m.Elements, buf.Count)
		}
		if !strings.Contains(text.String(), m.String()) {
			t.Errorf("%s: the text report lacks the mismatch line %q", tt.name, m.String())
		}
	}

	// The leaky score variant writes a beyond-causal cell the baseline
	// leaves untouched: the baseline's value is the sentinel, and the cell
	// is past the query's causal window.
	t.Run("leaky writes past the causal window", func(t *testing.T) {
		r := got["leaky"]
		if r == nil || r.Mismatch == nil {
			t.Fatalf("leaky: no mismatch reported (%+v)", r)
		}
		m := r.Mismatch
		inst := in[m.Case]
		if inst == nil || m.Buffer != "scores" || len(m.Coords) != 3 {
			t.Fatalf("leaky: mismatch in case %q buffer %s at %v, want scores [h t col] of a quick case", m.Case, m.Buffer, m.Coords)
		}
		pos0, ok := inst.Vars["pos0"].(int)
		if !ok {
			t.Fatalf("leaky: case %s has pos0 %v (%T), want an int", m.Case, inst.Vars["pos0"], inst.Vars["pos0"])
		}
		sentinel := spec.FormatElement(inst.Buffer("scores").Type, []byte{0xa5, 0xa5, 0xa5, 0xa5})
		tq, col := m.Coords[1], m.Coords[2]
		if m.Want != sentinel || col*64 <= pos0+tq {
			t.Errorf("leaky: want %s at [h %d t %d col %d]; want the sentinel %s at a beyond-causal cell", m.Want, m.Coords[0], tq, col, sentinel)
		}
	})

	// Over the limit: refused from the compiled size, nothing run, both
	// sizes reported for qsa_flash.
	if r := got["big"]; r != nil {
		if len(r.Cases) != 0 {
			t.Errorf("big: %d cases run, want none", len(r.Cases))
		}
		found := false
		for _, tg := range r.TGMem {
			if tg.Entry == "qsa_flash" {
				found = true
				if tg.Before != 7184 || tg.After != 7184+12288 || tg.SourceBefore != tg.Before || tg.SourceAfter != tg.After {
					t.Errorf("big: qsa_flash tg memory %+v, want 7184 → 19472 compiled and from source", tg)
				}
			}
		}
		if !found || !strings.Contains(r.Msg, "qsa_flash: 19472 bytes of threadgroup memory, limit 16384") {
			t.Errorf("big: tg memory %+v, msg %q", r.TGMem, r.Msg)
		}
	}
	if r := got["unrolled"]; r != nil && len(r.Cases) != len(in) {
		t.Errorf("unrolled: %d cases run, want %d", len(r.Cases), len(in))
	}
}

// TestPlantedCacheCorruption plants, in qsa_prep, a fault whose only
// effect is one element of the KV cache the kernel updates in place (an
// inout buffer): every case must fail parity on exactly that element, with
// the baseline's value and its negation reported.
func TestPlantedCacheCorruption(t *testing.T) {
	b := cpuBackend(t)
	s, src := loadSpec(t, "qsa_prep.yaml")
	sets := []string{"quick", "zeros"} // zeros: the scale is +0, the fault writes -0
	v := check.Variant{Name: "vsc-sign", Text: edit(t, src, vscStore, vscStoreFlipped)}
	rep, err := check.Run(context.Background(), check.Options{
		Spec: s, Backend: b, Sets: sets, Variants: []check.Variant{v}, Timeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", &text)
	if rep.Control == nil || rep.Control.Status != check.Pass {
		t.Fatalf("control: %+v", rep.Control)
	}
	if len(rep.Variants) != 1 {
		t.Fatalf("%d results for one variant", len(rep.Variants))
	}
	r := rep.Variants[0]
	if r.Status != check.FailParity {
		t.Fatalf("a variant that corrupts one element of the inout buffer vsc: %s, want %s", r.Status, check.FailParity)
	}
	in := instances(t, s, sets...)
	if len(r.Cases) != len(in) {
		t.Errorf("%d cases judged, want %d", len(r.Cases), len(in))
	}
	for _, c := range r.Cases {
		m := c.Mismatch
		if c.Status != check.FailParity || m == nil {
			t.Errorf("case %s: %s, want %s with a mismatch", c.Case, c.Status, check.FailParity)
			continue
		}
		inst := in[c.Case]
		if inst == nil {
			t.Errorf("case %q is not a case of %v", c.Case, sets)
			continue
		}
		pos0, ok := inst.Vars["pos0"].(int)
		if !ok {
			t.Fatalf("case %s: pos0 %v (%T), want an int", c.Case, inst.Vars["pos0"], inst.Vars["pos0"])
		}
		// Cell pos0 (the batch's first token), kv head 0, group 0.
		if m.Buffer != "vsc" || fmt.Sprint(m.Coords) != fmt.Sprint([]int{pos0, 0, 0}) || m.Differing != 1 || len(m.Others) != 0 {
			t.Errorf("case %s: mismatch %v, want vsc[%d 0 0] alone", c.Case, m, pos0)
		}
		want, _, _ := strings.Cut(m.Want, " (")
		got, _, _ := strings.Cut(m.Got, " (")
		if strings.HasPrefix(want, "-") || got != "-"+want {
			t.Errorf("case %s: want %s, got %s; want a scale and its negation", c.Case, m.Want, m.Got)
		}
	}
}

// TestPlantedRace removes a barrier whose absence the in-order schedule
// hides: thread 0 publishes the softmax denominator and, in order, runs
// before every reader. The checking mode sees the race in any order and
// names both lines; without it, parity in order passes and only the race
// probe's other orders catch it.
func TestPlantedRace(t *testing.T) {
	if testing.Short() {
		t.Skip("the race probe runs every case under six thread orders; skipped with -short")
	}
	b := cpuBackend(t)
	s, src := loadPrompt(t)
	old := "    if (tid == 0) {\n        stat[1] = l_run;\n    }\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n"
	text := edit(t, src, old, "    if (tid == 0) {\n        stat[1] = l_run;\n    }\n")
	v := []check.Variant{{Name: "no-final-barrier", Text: text}}
	opts := check.Options{Spec: s, Backend: b, Sets: []string{"quick"}, Variants: v, Timeout: 2 * time.Minute}

	rep, err := check.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Control.Status != check.Pass {
		t.Fatalf("control: %s %s", rep.Control.Status, rep.Control.Msg)
	}
	if len(rep.Variants) != 1 {
		t.Fatalf("%d results for one variant", len(rep.Variants))
	}
	r := rep.Variants[0]
	if r.Status != check.FailRace || !strings.Contains(r.Msg, "race on threadgroup array stat[1]") || strings.Count(r.Msg, "no-final-barrier:") != 2 {
		t.Fatalf("checking mode: %s %q, want fail-race on stat[1] naming both lines", r.Status, r.Msg)
	}

	// Without the checking mode the variant passes in order: the fault is
	// a race only.
	opts.NoDetect = true
	rep, err = check.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Variants) != 1 {
		t.Fatalf("%d results for one variant", len(rep.Variants))
	}
	if r := rep.Variants[0]; r.Status != check.Pass {
		t.Fatalf("in order, the variant without the final barrier: %s (%v), want pass: the planted race is not hidden", r.Status, r.Mismatch)
	}

	opts.Race = true
	rep, err = check.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", &out)
	if rep.Control.Status != check.Pass {
		t.Fatalf("control under the race probe: %s %s", rep.Control.Status, rep.Control.Msg)
	}
	if len(rep.Variants) != 1 {
		t.Fatalf("%d results for one variant", len(rep.Variants))
	}
	r = rep.Variants[0]
	if r.Status != check.FailRace {
		t.Fatalf("variant without the final barrier under the race probe: %s, want fail-race", r.Status)
	}
	if m := r.Mismatch; m == nil || m.Buffer != "out" || m.Order == "" || m.Order == "in-order" || !strings.Contains(out.String(), "order "+m.Order+": buffer out") {
		t.Errorf("race mismatch = %+v, want one in out naming the order that differed", m)
	}
}

// instances instantiates every case of the named sets, by "set/name".
func instances(t *testing.T, s *spec.Spec, sets ...string) map[string]*spec.Instance {
	t.Helper()
	cases, err := s.Cases(sets...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*spec.Instance{}
	for _, c := range cases {
		in, err := s.Instantiate(c)
		if err != nil {
			t.Fatal(err)
		}
		out[c.Set+"/"+c.Name] = in
	}
	return out
}
