package check

import (
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
	"metalab/backend/fake"
)

const oobSpec = `source: k.metal
seed: 1
buffers:
  - {name: in, index: 0, type: float, count: N, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: out, index: 1, type: float, count: N, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [N]}
sets:
  quick:
    cases: [{N: 64}]
`

// TestBaselineBadAccess: a baseline that reads past the end of a buffer
// fails its control with the case named and the access described as a
// variant's is, by buffer, element, thread and source line (the plain
// build alone sees only a buffer index and an offset).
func TestBaselineBadAccess(t *testing.T) {
	be := cputest.Shared(t)
	for _, tc := range []struct {
		name, body, want string
		line             int
	}{
		{"read", "    float x = in[i + 64];\n    out[i] = x;\n", "out-of-bounds read of buffer in (index 0), byte 256", 8},
		{"write", "    float x = in[i];\n    out[i + 64] = x;\n", "out-of-bounds write of buffer out (index 1), byte 256", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kernel := "#include <metal_stdlib>\nusing namespace metal;\n\nkernel void k(device const float* in [[buffer(0)]],\n" +
				"              device float* out [[buffer(1)]],\n              uint i [[thread_position_in_grid]])\n{\n" + tc.body + "}\n"
			s := setup(t, oobSpec, kernel)
			rep := run(t, Options{Spec: s, Backend: be, Variants: []Variant{variant("v", kernel)}})
			ctl := rep.Control
			if ctl.Status != BadAccess || ctl.Stopped != PartVerification {
				t.Fatalf("control %s at %s: %s", ctl.Status, ctl.Stopped, ctl.Msg)
			}
			for _, want := range []string{"on case quick/N=64", tc.want, "thread 0 (simdgroup 0, lane 0)", "k.metal:"} {
				if !strings.Contains(ctl.Msg, want) {
					t.Errorf("control message %q lacks %q", ctl.Msg, want)
				}
			}
			if len(ctl.Cases) != 1 || ctl.Cases[0].Case != "quick/N=64" || ctl.Cases[0].Status != BadAccess {
				t.Fatalf("control cases %+v", ctl.Cases)
			}
			var f *Finding
			for i := range ctl.Cases[0].Findings {
				if ctl.Cases[0].Findings[i].Kind == backend.FindBounds {
					f = &ctl.Cases[0].Findings[i]
				}
			}
			if f == nil || f.Case != "quick/N=64" || f.Detail.Access.Line != tc.line || f.Detail.Access.Thread != 0 || !strings.Contains(f.Msg, tc.want) {
				t.Fatalf("finding %+v, want one on line %d", f, tc.line)
			}
			if v := ctl.Verification; v.Status != BadAccess || len(v.Cases) != 1 {
				t.Errorf("verification part %s with %d cases", v.Status, len(v.Cases))
			}
			if rep.Variants[0].Status != NotJudged {
				t.Errorf("variant %s", rep.Variants[0].Status)
			}
		})
	}
}

// TestBaselineFailureCase: a baseline that fails its plain run names the
// case; an access fault is run again in the checking build, a timeout is
// not (it would take as long again).
func TestBaselineFailureCase(t *testing.T) {
	for _, tc := range []struct {
		marker   string
		status   Status
		compiles int
	}{
		{"timeout", Timeout, 1},
		{"deadlock", Deadlock, 1},
		{"bad-access", BadAccess, 2},
	} {
		be := fake.New()
		s := setup(t, testSpec, "// fake: "+tc.marker+"\n")
		rep := run(t, Options{Spec: s, Backend: be})
		ctl := rep.Control
		if ctl.Status != tc.status || !strings.Contains(ctl.Msg, "on case quick/N=16: variants are not judged") ||
			len(ctl.Cases) != 1 || ctl.Cases[0].Case != "quick/N=16" || ctl.Cases[0].Status != tc.status {
			t.Errorf("%s: control %s %q, cases %+v", tc.marker, ctl.Status, ctl.Msg, ctl.Cases)
		}
		if n := be.Compiles(); n != tc.compiles {
			t.Errorf("%s: %d compiles, want %d", tc.marker, n, tc.compiles)
		}
	}
}

// TestHeldOutBaselineFindingsLazily: at a held-out case the baseline's
// checking run is made only where the variant does not pass, and the
// variant is judged again with its findings. The baseline races (lane 0 of
// every simd group stores the same slot) only with two or more simd groups:
// not at the listed N=32, at every drawn N above it. A variant with the
// same store fails its first run at a drawn case (the finding is not the
// baseline's at any case seen), and passes once the baseline's own run
// there finds it too; a variant that adds a store the baseline never makes
// still fails.
func TestHeldOutBaselineFindingsLazily(t *testing.T) {
	be := cputest.Shared(t)
	kernel := func(extra string) string {
		return "#include <metal_stdlib>\nusing namespace metal;\n\nkernel void k(device const float* in [[buffer(0)]],\n" +
			"              device float* out [[buffer(1)]],\n              uint i [[thread_position_in_grid]])\n{\n" +
			"    threadgroup float s[2];\n    if (i % 32 == 0) s[0] = 1.0f;\n" + extra +
			"    threadgroup_barrier(mem_flags::mem_threadgroup);\n    out[i] = in[i] * s[0];\n}\n"
	}
	spec := strings.Replace(strings.Replace(oobSpec, "sets:", "domains:\n  N: {min: 32, max: 128}\nsets:", 1), "cases: [{N: 64}]", "cases: [{N: 32}]", 1)
	s := setup(t, spec, kernel(""))
	rep := run(t, Options{Spec: s, Backend: be, HeldOut: 2, Seed: 3, SeedSet: true, Variants: []Variant{
		variant("same", kernel("    // the baseline's store\n")),
		variant("added", kernel("    if (i % 32 == 1) s[1] = 2.0f;\n    if (i == 0) s[1] = 3.0f;\n")),
	}})
	if rep.Control.Status != Pass || len(rep.Control.BaselineFindings) != 0 {
		t.Fatalf("control %s (%s), %d baseline findings at N=32: want a clean pass", rep.Control.Status, rep.Control.Msg, len(rep.Control.BaselineFindings))
	}
	same, added := rep.Variants[0], rep.Variants[1]
	if same.Status != Pass || same.HeldOut == nil || same.HeldOut.Judged != 2 {
		t.Errorf("same: %s %s, held out %+v: want a pass judged at both drawn cases", same.Status, same.Msg, same.HeldOut)
	}
	if added.Status != FailRace {
		t.Errorf("added: %s %s, want %s", added.Status, added.Msg, FailRace)
	}
}
