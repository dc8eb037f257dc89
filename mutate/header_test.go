package mutate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

// A kernel defined in a header and instantiated from the kernel file (MLX's
// softmax.h from softmax.metal) gets no site, since edits stay in the kernel
// file: it is listed as a skip for every mutation at its instantiation,
// naming the header and its entry points, and --fn with one of its host
// names says so instead of "no function".
func TestHeaderKernelsAreSkipped(t *testing.T) {
	dir := t.TempDir()
	hdr := `template <typename T, int N = 4>
[[kernel]] void scale(device T* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  for (int i = 0; i < N; i++) {
    out[tid * N + i] *= T(2);
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "scale.h"), []byte(hdr), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `#include <metal_stdlib>
using namespace metal;
#include "scale.h"

template [[host_name("scale_f32")]] [[kernel]] void scale<float>(device float*, uint);
template [[host_name("scale_f16")]] [[kernel]] void scale<half>(device half*, uint);

kernel void own(device float* out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
  for (int i = 0; i < 4; i++) {
    out[tid * 4 + i] += 1.0f;
  }
}
`
	path := filepath.Join(dir, "scale.metal")
	f, err := msl.ParseOptions(path, []byte(src), msl.Options{ReadFile: os.ReadFile})
	if err != nil {
		t.Fatal(err)
	}
	un := &mutate.Mutation{Name: "unroll", Doc: "d", Run: func(p *mutate.Pass) error {
		p.Report(mutate.Site{Pos: p.Func.Body.Lbrace, End: p.Func.Body.Lbrace + 1, Message: "m", Choices: []mutate.Choice{{Name: "c", Message: "c", Edits: []edit.Edit{{Start: p.Func.Body.Lbrace + 1, End: p.Func.Body.Lbrace + 1, New: " "}}}}})
		return nil
	}}
	other := &mutate.Mutation{Name: "hoist", Doc: "d", Run: noop}
	sites, skips, err := mutate.FindAllWith(f, []*mutate.Mutation{un, other}, nil, mutate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		if s.Func.Name != "own" {
			t.Errorf("site %s in %s, a kernel of the header", s.ID, s.Func.Name)
		}
	}
	if len(sites) != 1 {
		t.Errorf("%d sites, want 1 (in own)", len(sites))
	}
	if len(skips) != 2 {
		t.Fatalf("%d skips, want one per mutation for the header's kernel", len(skips))
	}
	line := strings.Count(src[:strings.Index(src, "template [[host_name(\"scale_f32")], "\n") + 1
	for _, s := range skips {
		if !strings.Contains(s.Reason, "kernel scale (scale_f32 and 1 more) is defined in header scale.h") || !strings.Contains(s.Reason, "a variant cannot change a header") {
			t.Errorf("%s: reason %q", s.Mutation.Name, s.Reason)
		}
		if got := f.Position(s.Pos).Line; got != line {
			t.Errorf("%s: skip at line %d, want the instantiation's line %d", s.Mutation.Name, got, line)
		}
	}
	_, _, err = mutate.FindAllWith(f, []*mutate.Mutation{un}, []string{"scale_f16"}, mutate.Options{})
	if err == nil || !strings.Contains(err.Error(), "kernel scale (scale_f16) is defined in header scale.h") {
		t.Errorf("--fn scale_f16: err = %v, want the header named", err)
	}
}
