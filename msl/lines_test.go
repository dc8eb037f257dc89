package msl

import (
	"bytes"
	"testing"
)

// TestLineEndings parses one source with LF, CRLF and CR-only (classic
// Mac) line breaks: each must give the same functions, loops and barriers
// at the same lines and columns. A CR-only file is one line to a reader
// that knows only LF, so its first directive would swallow it whole.
func TestLineEndings(t *testing.T) {
	lf := []byte(`#include <metal_stdlib>
using namespace metal;
#define N 4
// a comment
kernel void k(device float* o [[buffer(0)]], threadgroup float* t [[threadgroup(0)]], uint i [[thread_position_in_threadgroup]]) {
    for (int j = 0; j < N; ++j) { o[i] += 1.0f; }
    t[i] = o[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    o[i] = t[(i + 1) % 32];
}
`)
	type shape struct {
		fns, loops, barriers int
		where                []string
	}
	get := func(name string, src []byte) shape {
		t.Helper()
		f, err := Parse(name, src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var s shape
		for _, fn := range f.Functions() {
			s.fns++
			s.where = append(s.where, fn.Name+"@"+f.Position(fn.Pos).String())
			Walk(fn.Body, func(st Stmt) bool {
				switch st.(type) {
				case *For:
					s.loops++
					s.where = append(s.where, "for@"+f.Position(stmtStart(st)).String())
				case *Barrier:
					s.barriers++
					s.where = append(s.where, "barrier@"+f.Position(stmtStart(st)).String())
				}
				return true
			})
		}
		return s
	}
	want := get("k.metal", lf)
	if want.fns != 1 || want.loops != 1 || want.barriers != 1 {
		t.Fatalf("LF source: %+v, want 1 function, 1 loop, 1 barrier", want)
	}
	for _, eol := range []string{"\r\n", "\r"} {
		src := bytes.ReplaceAll(lf, []byte("\n"), []byte(eol))
		got := get("k.metal", src)
		if len(got.where) != len(want.where) {
			t.Errorf("%q line breaks: %v, want %v", eol, got.where, want.where)
			continue
		}
		for i := range got.where {
			if got.where[i] != want.where[i] {
				t.Errorf("%q line breaks: %s, want %s", eol, got.where[i], want.where[i])
			}
		}
	}
}

func stmtStart(s Stmt) int {
	p, _ := s.Span()
	return p
}
