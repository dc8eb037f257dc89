package msl

import (
	"strings"
	"testing"
)

// A place inside a kernel written in a #define body is named by the
// macro's use in the user's file and the macro, not by the expansion's own
// one-line text ("1:COL").
func TestAtNamesTheMacroUse(t *testing.T) {
	src := `#include <metal_stdlib>
using namespace metal;

#define impl_k(NAME) \
kernel void NAME(device float* o [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) { \
  o[tid] = 1.0f; \
}

impl_k(k_one)
`
	f, err := Parse("m.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	fn, _, err := f.Entry("k_one")
	if err != nil {
		t.Fatal(err)
	}
	ef := f.FileOf(fn)
	if ef == f {
		t.Fatal("k_one is not in an expansion's file")
	}
	got := ef.At(fn.Body.Lbrace)
	if want := "m.metal:9:1 (inside the expansion of impl_k)"; got != want {
		t.Errorf("At in the expansion = %q, want %q", got, want)
	}
	if got := f.At(strings.Index(src, "impl_k(k_one)")); got != "9:1" {
		t.Errorf("At in the file = %q, want 9:1", got)
	}
}

// IsPureMacro admits macros that compute a value from their parameters
// and refuses any that assign, increment, name something else or call a
// function of the file.
func TestIsPureMacro(t *testing.T) {
	src := `#include <metal_stdlib>
using namespace metal;
#define MAX(x, y) ((x) > (y) ? (x) : (y))
#define CLAMP(x, lo, hi) MAX(lo, min(x, hi))
#define SHIFT(x) ((x) << 2 | (x) >> 1 & ~(x))
#define ASSIGN(x, y) ((x) = (y))
#define INC(x) ((x)++)
#define ADDTO(x, y) ((x) += (y))
#define SHL(x) ((x) <<= 1)
#define GLOBAL(x) ((x) + g)
#define CALLS(x) helper(x)
#define OBJ 3
#define CAST(x) float(x)
float helper(float x) { return x; }
`
	f, err := Parse("m.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"MAX": true, "CLAMP": true, "SHIFT": true, "CAST": true,
		"ASSIGN": false, "INC": false, "ADDTO": false, "SHL": false, "GLOBAL": false, "CALLS": false, "OBJ": false, "UNDEFINED": false,
	} {
		if got := f.IsPureMacro(name); got != want {
			t.Errorf("IsPureMacro(%s) = %v, want %v", name, got, want)
		}
	}
}
