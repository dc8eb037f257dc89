package unroll_test

import (
	"errors"
	"strings"
	"testing"

	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/unroll"
)

// A loop over a template parameter that every instantiation binds alike
// (MLX's N_READS) rests on that value: the site's id covers it, so an id
// listed when the instantiations gave 4 is refused as stale once they give
// 8, though the loop's text is unchanged, and ids of one value are stable.
func TestTemplateValueInSiteID(t *testing.T) {
	src := func(n string) []byte {
		return []byte(`#include <metal_stdlib>
using namespace metal;

template <typename T, int N_READS>
kernel void rows(device T *out [[buffer(0)]], uint tid [[thread_position_in_grid]])
{
    for (int i = 0; i < N_READS; i++) {
        out[tid * N_READS + i] = T(i);
    }
}

template [[host_name("rows_f")]] kernel void rows<float, ` + n + `>(device float *out [[buffer(0)]], uint tid [[thread_position_in_grid]]);
template [[host_name("rows_h")]] kernel void rows<half, ` + n + `>(device half *out [[buffer(0)]], uint tid [[thread_position_in_grid]]);
`)
	}
	find := func(n string) *mutate.FoundSite {
		t.Helper()
		f, err := msl.Parse("rows.metal", src(n))
		if err != nil {
			t.Fatal(err)
		}
		found, err := mutate.Find(f, []*mutate.Mutation{unroll.Mutation}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 1 {
			t.Fatalf("N_READS = %s: %d sites, want 1", n, len(found))
		}
		if want := "N_READS = " + n + " in every instantiation"; !strings.Contains(found[0].Message, want) {
			t.Errorf("message %q does not say %q", found[0].Message, want)
		}
		return found[0]
	}
	four, eight, again := find("4"), find("8"), find("4")
	if four.ID == eight.ID {
		t.Fatalf("the same id %s for N_READS 4 and 8", four.ID)
	}
	if four.ID != again.ID {
		t.Errorf("id not stable: %s, then %s", four.ID, again.ID)
	}
	_, _, err := mutate.Resolve([]*mutate.FoundSite{eight}, four.Ref("by2"))
	var stale *mutate.StaleError
	if !errors.As(err, &stale) {
		t.Errorf("resolving the N_READS=4 id among the N_READS=8 sites: err = %v, want a StaleError", err)
	}
	if _, _, err := mutate.Resolve([]*mutate.FoundSite{again}, four.Ref("by2")); err != nil {
		t.Errorf("resolving the id among the same sites: %v", err)
	}
}
