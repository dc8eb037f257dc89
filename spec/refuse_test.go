package spec

import (
	"path/filepath"
	"strings"
	"testing"
)

// base is a small spec the refusal tests edit.
const base = `source: k.metal
buffers:
  - {name: a, index: 0, type: float, count: N, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: o, index: 1, type: float, count: N, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [N]}
sets:
  s:
    cases: [{N: 4}]
`

// TestRefusals checks that every spec the package refuses is refused with
// a positioned error, at parse time or when the case is instantiated, and
// that no error quotes a huge value back whole.
func TestRefusals(t *testing.T) {
	huge := strings.Repeat("N + ", 400) + "N"
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"threadgroups over 2^32-1", "threadgroups: [1]", "threadgroups: [1, 4294967296]",
			`k.yaml:6:34: case s/N=4: threadgroups y dimension "4294967296" = 4294967296 is over 2^32-1`},
		{"threads over 2^32-1", "threads: [N]", "threads: [N * 2147483648]",
			`k.yaml:6:45: case s/N=4: threads x dimension "N * 2147483648" = 8589934592 is over 2^32-1`},
		{"threadgroups below 1", "threadgroups: [1]", "threadgroups: [N - 4]",
			`k.yaml:6:31: case s/N=4: threadgroups x dimension "N - 4" = 0, want at least 1`},
		{"nesting", "cases: [{N: 4}]", "cases: [{N: 4}]\n    vars: {x: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}",
			`k.yaml:10:43: spec nests deeper than 32 levels`},
		{"nesting past the YAML decoder's limit", "cases: [{N: 4}]", "cases: [{N: 4}]\n    vars: {x: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "}",
			`k.yaml:10:46: spec nests deeper than 32 levels`},
		{"oversized expression", "count: N, role: output", "count: " + huge + ", role: output",
			`k.yaml:4:45: buffer "o" count: expression "N + N + N + N + N + N + N + N + N + N + N + N + N + N + N + "... (1601 bytes) is 1601 bytes, over the 1024-byte limit`},
		{"deeply bracketed expression", "count: N, role: output", "count: " + strings.Repeat("(", 40) + "N" + strings.Repeat(")", 40) + ", role: output",
			`k.yaml:4:45: buffer "o" count: expression "((((((((((((((((((((((((((((((((((((((((N)))))))))))))))))))"... (81 bytes) nests brackets 40 deep, over the limit of 32`},
		{"oversized value", "entry: k,", "entry: " + strings.Repeat("k", 5000) + ",",
			`k.yaml:6:13: value of 5000 bytes is over the 4096-byte limit`},
		{"oversized key", "cases: [{N: 4}]", "cases: [{N: 4}]\n    vars: {" + strings.Repeat("x", 300) + ": 1}",
			`k.yaml:10:12: key of 300 bytes is over the 256-byte limit`},
		{"bad expression is clipped", "count: N, role: output", "count: " + strings.Repeat("N ", 100) + ", role: output",
			`k.yaml:4:45: buffer "o" count: bad expression "N N N N N N N N N N N N N N N N N N N N N N N N N N N N N N "... (199 bytes)`},
		{"duplicate buffer index", "index: 1", "index: 0", `k.yaml:4:22: buffer "o": duplicate buffer index 0 (also buffer "a")`},
		{"index out of range", "index: 1", "index: 31", `k.yaml:4:22: buffer "o": index 31 out of range 0..30`},
		{"duplicate threadgroup index", "stages:", "  - {name: t1, index: 0, type: float, count: 4, role: threadgroup}\n  - {name: t2, index: 0, type: float, count: 4, role: threadgroup}\nstages:",
			`k.yaml:6:23: buffer "t2": duplicate threadgroup index 0 (also buffer "t1")`},
		{"bind out of range", "threads: [N]}", "threads: [N], bind: {a: [0, 40]}}", `k.yaml:6:63: stage "k": bind "a": index 40 out of range 0..30`},
		{"bind twice at one index", "threads: [N]}", "threads: [N], bind: {a: [2, 2]}}", `k.yaml:6:63: stage "k": buffer "a" bound twice at buffer index 2`},
		{"bind an empty list", "threads: [N]}", "threads: [N], bind: {a: []}}", `k.yaml:6:59: stage "k": bind "a": want an index or a non-empty list of indices`},
		{"two buffers at one index", "threads: [N]}", "threads: [N], bind: {a: 1}}", `k.yaml:4:22: stage "k": buffers "a" and "o" both bound at buffer index 1`},
		{"buffer listed twice", "threads: [N]}", "threads: [N], buffers: [a, o, a]}", `k.yaml:6:65: stage "k": buffer "a" listed twice`},
		{"negative slack", "role: output}", "role: output, slack: N - 8}", `k.yaml:4:69: case s/N=4: buffer "o": slack -4 bytes`},
		{"slack past the limit", "role: output}", "role: output, slack: 4294967296}", `k.yaml:4:69: case s/N=4: buffer "o": slack 4294967296 bytes: want 0 up to the 4294967296-byte buffer limit less the 16 bytes of data`},
		{"slack unknown variable", "role: output}", "role: output, slack: S}", `k.yaml:4:69: expression "S": unknown variable "S"`},
		{"struct array values of the wrong count", "buffers:", "structs:\n  P:\n    - {name: v, type: uint, len: 3, value: [1, 2]}\nbuffers:",
			`k.yaml:4:44: struct "P" field "v": 2 values for an array of 3 elements`},
		{"struct lane values of the wrong count", "buffers:", "structs:\n  P:\n    - {name: v, type: float4, value: [1, 2]}\nbuffers:",
			`k.yaml:4:38: struct "P" field "v": 2 values for the 4 lanes of float4`},
		{"struct list on a scalar field", "buffers:", "structs:\n  P:\n    - {name: v, type: float, value: [1, 2]}\nbuffers:",
			`k.yaml:4:37: struct "P" field "v": a list of values needs an array field (len) or a vector field, not a float`},
		{"struct value on a nested struct", "buffers:", "structs:\n  Q:\n    - {name: x, type: uint}\n  P:\n    - {name: q, type: Q, value: 1}\nbuffers:",
			`k.yaml:6:33: struct "P" field "q": a nested struct field takes no value; give values to the fields of struct "Q"`},
		{"struct buffer value list of the wrong count", "buffers:", "structs:\n  P:\n    - {name: v, type: uint, len: 2}\nbuffers:\n  - {name: p, index: 2, type: P, role: input, values: {v: [1, 2, 3]}}",
			`k.yaml:6:59: buffer "p" value "v": 3 values for an array of 2 elements`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(base, tt.old) {
				t.Fatalf("test bug: %q not in the base spec", tt.old)
			}
			s, err := Parse("k.yaml", []byte(strings.Replace(base, tt.old, tt.new, 1)))
			if err == nil {
				cs, _ := s.Cases()
				_, err = s.Instantiate(cs[0])
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %.300v\nwant prefix %s", err, tt.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes quotes too much: %.200s...", len(err.Error()), err)
			}
		})
	}
}

func TestAbsoluteSource(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "elsewhere", "k.metal"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(base, "source: k.metal", "source: "+abs, 1)
	src = strings.Replace(src, "threads: [N]}", "threads: [N], source: "+abs+"}", 1)
	s, err := Parse(filepath.Join("specs", "k.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != abs || s.Stages[0].Source != abs {
		t.Errorf("Source = %s, stage source = %s; want %s for both", s.Source, s.Stages[0].Source, abs)
	}
	rel, err := Parse(filepath.Join("specs", "k.yaml"), []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("specs", "k.metal"); rel.Source != want {
		t.Errorf("relative Source = %s, want %s", rel.Source, want)
	}
}
