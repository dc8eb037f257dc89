package elidebarrier_test

import (
	"strings"
	"testing"

	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/elidebarrier"
)

const twoD = `#include <metal_stdlib>
using namespace metal;

kernel void k2(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
               uint2 tpitg [[thread_position_in_threadgroup]], uint3 tp3 [[threads_per_threadgroup]])
{
    threadgroup float s[128];
    const uint tid = tpitg.y * tp3.x + tpitg.x;
    s[tid] = float(tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = s[tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s[tpitg.y * tp3.x + tpitg.x] = 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] += s[tpitg.x];
}
`

// TestGeometry lists the sites of a two-dimensional kernel without
// geometry (every barrier refused, stating the assumption), and under
// geometries: the barrier whose intervals touch one element per thread is
// proven, the one where thread (x, y) reads what thread (x, 0) wrote is
// needed, with the geometry named.
func TestGeometry(t *testing.T) {
	f, err := msl.Parse("k2.metal", []byte(twoD))
	if err != nil {
		t.Fatal(err)
	}
	muts := []*mutate.Mutation{elidebarrier.Mutation}
	sites, skips, err := mutate.FindAllWith(f, muts, nil, mutate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 0 {
		t.Errorf("without geometry: %d sites, want none", len(sites))
	}
	if len(skips) != 3 {
		t.Fatalf("without geometry: %d skips, want 3", len(skips))
	}
	for _, s := range skips {
		if !strings.Contains(s.Reason, "assuming one-dimensional threadgroups, but the kernel reads tpitg.y") {
			t.Errorf("without geometry: reason %q does not state the assumption", s.Reason)
		}
	}
	for _, geo := range [][]msl.Dims{{{32, 4, 1}}, {{16, 4, 1}, {64, 1, 1}}, {{8, 8, 1}}} {
		sites, skips, err := mutate.FindAllWith(f, muts, nil, mutate.Options{Threads: map[string][]msl.Dims{"k2": geo}})
		if err != nil {
			t.Fatal(err)
		}
		line := func(pos int) int { return f.Position(pos).Line }
		var got []int
		for _, s := range sites {
			got = append(got, line(s.Pos))
			if !strings.Contains(s.Message, "threads per threadgroup") {
				t.Errorf("%v: site message %q does not name the geometry", geo, s.Message)
			}
		}
		if len(got) != 2 || got[0] != 10 || got[1] != 12 {
			t.Errorf("%v: sites at lines %v, want 10 and 12 (skips: %s)", geo, got, reasons(skips))
		}
		multi := geo[0][1] > 1
		if len(skips) != 1 || line(skips[0].Pos) != 14 || !strings.Contains(skips[0].Reason, "needed:") && multi {
			t.Errorf("%v: skips %s, want the barrier of line 14 needed", geo, reasons(skips))
			continue
		}
		if !strings.Contains(skips[0].Reason, geo[0].String()+" threads per threadgroup") {
			t.Errorf("%v: reason %q does not name the geometry", geo, skips[0].Reason)
		}
	}
}

func reasons(skips []*mutate.FoundSkip) string {
	var out []string
	for _, s := range skips {
		out = append(out, s.Reason)
	}
	return strings.Join(out, "; ")
}

const objectCallers = `#include <metal_stdlib>
using namespace metal;

void publish(threadgroup float *s, device float *out)
{
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s[0] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[0] = s[0];
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

struct publisher {
    threadgroup float *s;
    void operator()(device float *out) { publish(s, out); }
};

kernel void one(device float *out [[buffer(0)]])
{
    threadgroup float s[1];
    publish(s, out);
}

kernel void many(device float *out [[buffer(0)]])
{
    threadgroup float s[1];
    publisher run{s};
    run(out);
}
`

// TestGeometryObjectCallers: a helper's barrier whose intervals touch
// s[0] orders nothing with one thread per threadgroup and is needed with
// more. Kernel one calls the helper by name, kernel many through an
// object's operator(); with the geometry of one only, the proof must not
// take one's single thread for many's threads: it assumes the default and
// finds the barrier needed. With both kernels' geometries of one thread it
// is proven for them.
func TestGeometryObjectCallers(t *testing.T) {
	f, err := msl.Parse("objects.metal", []byte(objectCallers))
	if err != nil {
		t.Fatal(err)
	}
	if ks, _ := f.KernelsMayReach(f.Func("publish")); len(ks) != 2 {
		t.Fatalf("kernels that may run publish: %v, want one and many", ks)
	}
	muts := []*mutate.Mutation{elidebarrier.Mutation}
	one := []msl.Dims{{1, 1, 1}}
	for _, c := range []struct {
		threads map[string][]msl.Dims
		proven  bool
	}{
		{map[string][]msl.Dims{"one": one}, false},
		{map[string][]msl.Dims{"one": one, "many": one}, true},
	} {
		sites, skips, err := mutate.FindAllWith(f, muts, []string{"publish"}, mutate.Options{Threads: c.threads})
		if err != nil {
			t.Fatal(err)
		}
		var at8 *mutate.FoundSite
		for _, s := range sites {
			if f.Position(s.Pos).Line == 8 {
				at8 = s
			}
		}
		if c.proven != (at8 != nil) {
			t.Errorf("threads %v: barrier of line 8 offered %v, want %v (skips: %s)", c.threads, at8 != nil, c.proven, reasons(skips))
		}
		if !c.proven {
			found := false
			for _, s := range skips {
				if f.Position(s.Pos).Line == 8 && strings.Contains(s.Reason, "needed:") {
					found = true
				}
			}
			if !found {
				t.Errorf("threads %v: barrier of line 8 not refused as needed (skips: %s)", c.threads, reasons(skips))
			}
		}
	}
}
