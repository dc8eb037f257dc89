package spec

import (
	"bytes"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustInstances(t *testing.T, s *Spec, sets ...string) []*Instance {
	t.Helper()
	cs, err := s.Cases(sets...)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Instance
	for _, c := range cs {
		in, err := s.Instantiate(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	if len(out) == 0 {
		t.Fatalf("sets %v have no cases: every loop over them would check nothing", sets)
	}
	return out
}

func TestExample(t *testing.T) {
	s, err := Load("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(s.Source, "testdata/example.metal") {
		t.Errorf("Source = %q, want it resolved next to the spec", s.Source)
	}
	for _, in := range mustInstances(t, s) {
		name := in.Case.Set + "/" + in.Case.Name
		T, pos0 := in.Vars["T"].(int), in.Vars["pos0"].(int)
		for _, b := range in.Buffers {
			if b.Role != Threadgroup && len(b.Data) != b.Count*b.Type.Size {
				t.Errorf("%s: buffer %s has %d bytes, want %d", name, b.Name, len(b.Data), b.Count*b.Type.Size)
			}
		}
		q := in.Buffer("q")
		for i, v := range Decode(q.Type, q.Data) {
			if math.IsNaN(v) || v < -1 || v > 1 {
				t.Fatalf("%s: q[%d] = %v, outside [-1, 1]", name, i, v)
			}
		}
		for i, v := range Decode(in.Buffer("ksc").Type, in.Buffer("ksc").Data) {
			if !(v > 0 && v <= 0.05) {
				t.Fatalf("%s: ksc[%d] = %v, want in (0, 0.05]", name, i, v)
			}
		}
		ids := Decode(in.Buffer("ids").Type, in.Buffer("ids").Data)
		for r := range T {
			row := ids[r*64 : (r+1)*64]
			n := 0
			for j, v := range row {
				if v == -1 {
					continue
				}
				if j != n {
					t.Fatalf("%s: ids row %d: id at %d after -1 padding: %v", name, r, j, row)
				}
				n++
				if v < 0 || int(v) > pos0+r || j > 0 && v <= row[j-1] {
					t.Fatalf("%s: ids row %d: %v not ascending causal ids <= %d", name, r, row, pos0+r)
				}
			}
			if want := min(16, pos0+r+1); n != want {
				t.Fatalf("%s: ids row %d has %d ids, want %d", name, r, n, want)
			}
		}
		out := in.Buffer("out")
		for i, b := range out.Data {
			if want := []byte{0xde, 0xad}[i%2]; b != want {
				t.Fatalf("%s: out byte %d = %#x, want sentinel %#x", name, i, b, want)
			}
		}
		p := Decode(in.Buffer("params").Type, in.Buffer("params").Data)
		if p[0] != float64(T) || p[2] != float64(pos0) || math.Abs(p[3]-1/math.Sqrt(128)) > 1e-7 {
			t.Errorf("%s: params = %v", name, p)
		}
		st := in.Stages[0]
		want := uint64(1)
		if in.Case.Set == "fallback" {
			want = 0
		}
		if c := st.Constants["COOP_K4"]; c.Type != "bool" || c.Bits != want {
			t.Errorf("%s: COOP_K4 = %+v, want bits %d", name, c, want)
		}
		if st.Threadgroups.X != (T+63)/64 || st.Threadgroups.Y != 4 || st.Threadgroups.Z != 1 || st.Threads.X != 128 {
			t.Errorf("%s: geometry %v x %v", name, st.Threadgroups, st.Threads)
		}
		if len(st.Bindings) != 7 || in.Dispatches != 3 {
			t.Errorf("%s: %d bindings, %d dispatches", name, len(st.Bindings), in.Dispatches)
		}
	}
	edge := mustInstances(t, s, "edge")[0]
	var pos, neg int
	for _, v := range Decode(edge.Buffer("q").Type, edge.Buffer("q").Data) {
		if v == 0 && math.Signbit(v) {
			neg++
		} else if v == 0 {
			pos++
		}
	}
	if pos < 1000 || neg < 1000 {
		t.Errorf("edge q has %d +0 and %d -0, want many of each", pos, neg)
	}
}

func TestDeterministicAndIndependent(t *testing.T) {
	const base = `
source: k.metal
seed: 7
buffers:
  - {name: a, index: 0, type: half, count: N, role: input, gen: {kind: uniform, min: -2, max: 2}}
  - {name: o, index: 1, type: float, count: N, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [N]}
sets:
  s:
    cases: [{N: 64}]
`
	s1, err := Parse("k.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	withExtra := strings.Replace(base, "  - {name: o,", "  - {name: z, index: 2, type: int, count: N, role: input, gen: {kind: randint, min: 0, max: 9}}\n  - {name: o,", 1)
	s2, err := Parse("k.yaml", []byte(withExtra))
	if err != nil {
		t.Fatal(err)
	}
	seed8, err := Parse("k.yaml", []byte(strings.Replace(base, "seed: 7", "seed: 8", 1)))
	if err != nil {
		t.Fatal(err)
	}
	a1 := mustInstances(t, s1)[0].Buffer("a").Data
	a1again := mustInstances(t, s1)[0].Buffer("a").Data
	a2 := mustInstances(t, s2)[0].Buffer("a").Data
	a3 := mustInstances(t, seed8)[0].Buffer("a").Data
	if !bytes.Equal(a1, a1again) {
		t.Error("two instantiations of one case differ")
	}
	if !bytes.Equal(a1, a2) {
		t.Error("adding a buffer changed another buffer's bytes")
	}
	if bytes.Equal(a1, a3) {
		t.Error("a different seed gave the same bytes")
	}
}

func TestParseErrors(t *testing.T) {
	const good = `source: k.metal
buffers:
  - name: q
    index: 0
    type: half
    count: T
    role: input
    gen: {kind: uniform, min: -1, max: 1}
  - {name: o, index: 1, type: float, count: T, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [T]}
sets:
  s:
    cases: [{T: 4}]
`
	tests := []struct {
		name    string
		old     string
		new     string
		wantErr string
	}{
		{"unknown type", "type: half", "type: hlf", `k.yaml:5:11: buffer "q": unknown element type "hlf"`},
		{"unknown key", "    count: T\n", "    count: T\n    cuont: 3\n", `k.yaml:7:5: buffer: unknown field "cuont"`},
		{"unknown top key", "source: k.metal", "source: k.metal\nsedd: 3", `k.yaml:2:1: spec: unknown field "sedd"`},
		{"bad expression", "count: T\n    role", "count: T *\n    role", `k.yaml:6:12: buffer "q" count: bad expression "T *"`},
		{"unknown variable", "count: T\n    role", "count: U\n    role", `k.yaml:6:12: expression "U": unknown variable "U"`},
		{"duplicate index", "index: 1", "index: 0", `k.yaml:9:22: buffer "o": duplicate buffer index 0 (also buffer "q")`},
		{"missing buffer", "threads: [T]}", "threads: [T], buffers: [q, p]}", `k.yaml:11:62: stage "k": unknown buffer "p"`},
		{"bad role", "role: output", "role: out", `unknown role "out"`},
		{"unknown gen kind", "kind: uniform", "kind: gauss", `k.yaml:8:11: buffer "q": unknown generator kind "gauss"`},
		{"gen missing param", "min: -1, ", "", `gen kind uniform needs "min"`},
		{"edge on ints", "type: half", "type: int", `edge mode`},
		{"unknown set", "cases: [{T: 4}]", "cases: [{T: 4}]\n    foo: 1", `set "s": unknown field "foo"`},
		{"bad case value", "{T: 4}", "{T: four}", `case variable "T": want a number or a boolean`},
		{"no source", "source: k.metal\n", "", "spec: missing source"},
		{"yaml syntax", "    count: T\n", "\tcount: T\n", "k.yaml:5:1: found a tab character that violates indentation"},
		{"unquoted comma in flow list", "threadgroups: [1]", "threadgroups: [ceil_div(T, 4)]", `k.yaml:11:31: stage "k" threadgroups: bad expression "ceil_div(T"`},
		{"defaults unknown set", "    cases: [{T: 4}]\n", "    cases: [{T: 4}]\ndefaults: {cases: [s, full]}\n", `k.yaml:15:23: defaults: cases: no case set "full"`},
		{"defaults unknown key", "    cases: [{T: 4}]\n", "    cases: [{T: 4}]\ndefaults: {sets: [s]}\n", `k.yaml:15:12: defaults: unknown field "sets"`},
		{"includes not a list", "source: k.metal", "source: k.metal\nincludes: {a: b}", `k.yaml:2:11: includes: want a directory or a list of directories`},
		{"includes empty", "source: k.metal", "source: k.metal\nincludes: ['']", `k.yaml:2:12: includes: empty directory`},
		{"stage includes nested", "threads: [T]}", "threads: [T], includes: [[a]]}", `stage "k" includes: want a scalar`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := good
			if tt.name == "edge on ints" {
				src = strings.Replace(src, "max: 1}", "max: 1, edge: cancel}", 1)
			}
			if !strings.Contains(src, tt.old) {
				t.Fatalf("test bug: %q not in spec", tt.old)
			}
			src = strings.Replace(src, tt.old, tt.new, 1)
			_, err := Parse("k.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if _, err := Parse("k.yaml", []byte(good)); err != nil {
		t.Errorf("good spec: %v", err)
	}
	// The unquoted-comma error says how to fix it.
	_, err := Parse("k.yaml", []byte(strings.Replace(good, "threadgroups: [1]", "threadgroups: [ceil_div(T, 4)]", 1)))
	if err == nil || !strings.Contains(err.Error(), `must be quoted, e.g. "ceil_div(T, 64)"`) {
		t.Errorf("unquoted comma error = %v, want the quoting hint", err)
	}
	if _, err := Parse("k.yaml", []byte(strings.Replace(good, "threadgroups: [1]", `threadgroups: ["ceil_div(T, 4)"]`, 1))); err != nil {
		t.Errorf("quoted comma: %v", err)
	}
}

// TestIncludes checks that include directories resolve against the
// spec's directory, the stage's after the spec's, and reach the
// instances' stages.
func TestIncludes(t *testing.T) {
	src := `source: k.metal
includes: [inc, /abs/inc]
buffers:
  - {name: o, index: 0, type: float, count: 4, role: output}
stages:
  - {entry: a, threadgroups: [1], threads: [4]}
  - {entry: b, threadgroups: [1], threads: [4], includes: more}
sets:
  s:
    cases: [{T: 4}]
`
	s, err := Parse(filepath.Join("dir", "k.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join("dir", "inc"), "/abs/inc"}
	if strings.Join(s.Includes, ",") != strings.Join(want, ",") {
		t.Errorf("Includes = %q, want %q", s.Includes, want)
	}
	in := mustInstances(t, s)[0]
	if got := strings.Join(in.Stages[0].IncludeDirs, ","); got != strings.Join(want, ",") {
		t.Errorf("stage a IncludeDirs = %q, want %q", got, want)
	}
	want = append(want, filepath.Join("dir", "more"))
	if got := strings.Join(in.Stages[1].IncludeDirs, ","); got != strings.Join(want, ",") {
		t.Errorf("stage b IncludeDirs = %q, want %q", got, want)
	}
}

func TestDefaultSets(t *testing.T) {
	const base = `source: k.metal
buffers:
  - {name: o, index: 0, type: float, count: T, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [T]}
sets:
`
	tests := []struct {
		name, sets, defaults string
		want                 []string
	}{
		{"declared", "  quick: {cases: [{T: 1}]}\n  edge: {cases: [{T: 2}]}\n  full: {cases: [{T: 3}]}\n", "defaults: {cases: [edge, full]}\n", []string{"edge", "full"}},
		{"quick", "  full: {cases: [{T: 3}]}\n  quick: {cases: [{T: 1}]}\n", "", []string{"quick"}},
		{"all", "  a: {cases: [{T: 3}]}\n  b: {cases: [{T: 1}]}\n", "", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("k.yaml", []byte(base+tt.sets+tt.defaults))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.DefaultSets(); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("DefaultSets = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestInstantiateErrors(t *testing.T) {
	src := `source: k.metal
buffers:
  - {name: ids, index: 0, type: int, count: T * 60, role: input, gen: {kind: selected-ids, rows: T, pos0: 0, count: 8}}
stages:
  - {entry: k, threadgroups: [T / 3], threads: [32]}
sets:
  s:
    cases: [{T: 4}]
`
	s, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := s.Cases("s")
	_, err = s.Instantiate(cs[0])
	if err == nil || !strings.Contains(err.Error(), "k.yaml:3:") || !strings.Contains(err.Error(), "but the buffer has 240 elements") {
		t.Errorf("selected-ids size error = %v", err)
	}
	s2, err := Parse("k.yaml", []byte(strings.Replace(src, "T * 60", "T * 64", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s2.Instantiate(cs[0])
	if err == nil || !strings.Contains(err.Error(), `k.yaml:5:31: case s/T=4: expression "T / 3": value 1.3333333333333333 is not an integer`) {
		t.Errorf("non-integral geometry error = %v", err)
	}
	if _, err := s.Cases("nope"); err == nil {
		t.Error("Cases of an unknown set: no error")
	}

	// A variable that one set binds and another does not is found only
	// when the other set's case is instantiated; the error still starts
	// with the YAML position of the expression.
	s3, err := Parse("k.yaml", []byte(`source: k.metal
buffers:
  - {name: o, index: 0, type: float, count: T * U, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [32]}
sets:
  a:
    cases: [{T: 4, U: 2}]
  b:
    cases: [{T: 4}]
`))
	if err != nil {
		t.Fatal(err)
	}
	cs3, _ := s3.Cases("b")
	_, err = s3.Instantiate(cs3[0])
	if err == nil || !strings.HasPrefix(err.Error(), `k.yaml:3:45: case b/T=4: expression "T * U": unknown variable "U"`) {
		t.Errorf("instantiate-time unknown variable error = %v", err)
	}
}

func TestLookupType(t *testing.T) {
	tests := []struct {
		name        string
		size, align int
	}{
		{"half", 2, 2}, {"bfloat", 2, 2}, {"int8", 1, 1}, {"char4", 4, 4}, {"uchar", 1, 1},
		{"float3", 16, 16}, {"half3", 8, 8}, {"packed_float3", 12, 4}, {"packed_half4", 8, 2},
		{"float4", 16, 16}, {"int2", 8, 8}, {"long", 8, 8}, {"ushort2", 4, 4},
	}
	for _, tt := range tests {
		typ, ok := LookupType(tt.name)
		if !ok || typ.Size != tt.size || typ.Align != tt.align {
			t.Errorf("LookupType(%q) = %+v, %v; want size %d align %d", tt.name, typ, ok, tt.size, tt.align)
		}
	}
	for _, bad := range []string{"hlf", "float5", "float1", "packed_", "struct"} {
		if _, ok := LookupType(bad); ok {
			t.Errorf("LookupType(%q) succeeded", bad)
		}
	}
}

func TestStructLayout(t *testing.T) {
	src := `source: k.metal
structs:
  P:
    - {name: a, type: half}
    - {name: b, type: float3, value: i + 1}
    - {name: c, type: packed_float3, value: 2}
    - {name: d, type: uchar, len: 3, value: 9}
buffers:
  - {name: p, index: 0, type: P, count: 2, role: input, values: {c: T}}
stages:
  - {entry: k, threadgroups: [1], threads: [1]}
sets:
  s:
    cases: [{T: 5}]
`
	s, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := s.Structs["P"]
	var offs []int
	for _, f := range p.Fields {
		offs = append(offs, f.Offset)
	}
	if want := []int{0, 16, 32, 44}; !equalInts(offs, want) || p.Size != 48 || p.Align != 16 {
		t.Errorf("layout offsets %v size %d align %d; want %v 48 16", offs, p.Size, p.Align, want)
	}
	in := mustInstances(t, s)[0]
	got := Decode(p, in.Buffer("p").Data)
	want := []float64{0, 1, 1, 1, 5, 5, 5, 9, 9, 9, 0, 2, 2, 2, 5, 5, 5, 9, 9, 9}
	if len(got) != len(want) {
		t.Fatalf("decoded %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("decoded %v, want %v", got, want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFormatElement(t *testing.T) {
	typ, _ := LookupType("half2")
	if got := FormatElement(typ, []byte{0x00, 0x3c, 0x00, 0x80}); got != "(1, -0) (0x3c00 0x8000)" {
		t.Errorf("FormatElement = %q", got)
	}
}

func TestEdgeModes(t *testing.T) {
	src := `source: k.metal
buffers:
  - {name: c, index: 0, type: float, count: 1000, role: input, gen: {kind: uniform, min: 0.5, max: 1, edge: cancel, eps: 0.001}}
  - {name: n, index: 1, type: half, count: 10000, role: input, gen: {kind: uniform, min: -1, max: 1, edge: nonfinite, rate: 0.1}}
  - {name: i, index: 2, type: short2, count: 4, role: inout, gen: {kind: iota, start: 3, step: -2}}
stages:
  - {entry: k, threadgroups: [1], threads: [1]}
sets:
  s:
    cases: [{}]
`
	s, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	in := mustInstances(t, s)[0]
	c := Decode(in.Buffer("c").Type, in.Buffer("c").Data)
	if len(c) != 1000 {
		t.Fatalf("c decodes to %d values, want 1000", len(c))
	}
	for k := 0; k < len(c); k += 2 {
		if c[k] < 0.5 || c[k] > 1 || math.Abs(c[k]+c[k+1]+c[k]*0.001) > 1e-6 {
			t.Fatalf("cancel pair %v, %v", c[k], c[k+1])
		}
	}
	var bad int
	for _, v := range Decode(in.Buffer("n").Type, in.Buffer("n").Data) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			bad++
		}
	}
	if bad < 800 || bad > 1200 {
		t.Errorf("%d non-finite values of 10000 at rate 0.1", bad)
	}
	got := Decode(in.Buffer("i").Type, in.Buffer("i").Data)
	want := []float64{3, 1, -1, -3, -5, -7, -9, -11}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("iota = %v, want %v", got, want)
		}
	}
}

func TestExprHelpers(t *testing.T) {
	tests := []struct {
		src  string
		want int
	}{
		{"ceil_div(T, 64)", 2}, {"align(T, 64)", 128}, {"div(T, 64)", 1}, {"max(T, 200)", 200},
		{"min(T, 3) * 2", 6}, {"T % 64", 36}, {"ceil_div(-1, 4)", 0}, {"div(-1, 4)", -1},
	}
	for _, tt := range tests {
		e, err := compileExpr(tt.src, tokenPos())
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Int(map[string]any{"T": 100})
		if err != nil || got != tt.want {
			t.Errorf("%s = %v, %v; want %d", tt.src, got, err, tt.want)
		}
	}
}

func tokenPos() token.Position { return token.Position{Filename: "t", Line: 1, Column: 1} }

// TestBundledSpecs loads the kernel specs shipped in kernels/ and
// instantiates every case, so a format change cannot silently break them.
func TestBundledSpecs(t *testing.T) {
	paths, _ := filepath.Glob("../kernels/*.yaml")
	if len(paths) == 0 {
		t.Fatal("no bundled kernel specs in ../kernels: they moved or the glob is wrong")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			s, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			sets := []string{}
			for _, set := range s.Sets {
				sets = append(sets, set.Name)
			}
			if testing.Short() {
				sets = sets[:1] // the full shapes take seconds to generate
			}
			for _, in := range mustInstances(t, s, sets...) {
				for _, st := range in.Stages {
					if _, err := os.Stat(st.Source); err != nil {
						t.Errorf("case %s: stage %s: %v", in.Case.Name, st.Entry, err)
					}
				}
			}
		})
	}
}

// TestBadSizes checks that sizes a case cannot sensibly have are positioned
// errors, not allocations, panics or silently wrapped sizes.
func TestBadSizes(t *testing.T) {
	spec := func(buf string) string {
		return "source: k.metal\nbuffers:\n  - " + buf + "\n  - {name: o, index: 1, type: float, count: 4, role: output}\n" +
			"stages:\n  - {entry: k, threadgroups: [1], threads: [1]}\nsets:\n  s:\n    cases: [{T: 4}]\n"
	}
	tests := []struct {
		buf, want string
	}{
		{"{name: x, index: 0, type: float4, count: T * 1152921504606846976, role: output}", `k.yaml:3:46: case s/T=4: buffer "x": count 4611686018427387904 of 16-byte float4 is over the 4294967296-byte buffer limit`},
		{"{name: x, index: 0, type: float, count: 6, shape: [-2, -3], role: output}", `k.yaml:3:56: case s/T=4: buffer "x": negative shape dimension -2`},
		{"{name: x, index: 0, type: float, count: 6, shape: [4294967296, 4294967296, 0, T], role: output}", `k.yaml:3:5: case s/T=4: buffer "x": shape [4294967296 4294967296 0 4] has 0 elements, count is 6`},
		{"{name: x, index: 0, type: float, count: 6, shape: [4294967296, 4294967296, 4], role: output}", `k.yaml:3:5: case s/T=4: buffer "x": shape [4294967296 4294967296 4] has too many elements, count is 6`},
		{"{name: x, index: 0, type: float, count: T % 0, role: output}", `k.yaml:3:45: case s/T=4: expression "T % 0": runtime error: integer divide by zero`},
		{"{name: x, index: 0, type: float, count: T, role: input, gen: {kind: randint, min: 0, max: 1e30}}", `k.yaml:3:87: case s/T=4: gen randint: range [0, 1e+30] holds no integer or more than 2^53`},
		{"{name: x, index: 0, type: float, count: T, role: input, gen: {kind: randint, min: 0.25, max: 0.75}}", `k.yaml:3:87: case s/T=4: gen randint: range [0.25, 0.75] holds no integer or more than 2^53`},
	}
	for _, tt := range tests {
		s, err := Parse("k.yaml", []byte(spec(tt.buf)))
		if err != nil {
			t.Errorf("%s: parse: %v", tt.buf, err)
			continue
		}
		cs, _ := s.Cases()
		_, err = s.Instantiate(cs[0])
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.buf, err, tt.want)
		}
	}

	for _, tt := range []struct{ buffers, want string }{
		{"buffers: []\n", "k.yaml:2:10: buffers: want a non-empty list"},
		{"buffers:\n  - {name: x, type: float, count: 4, role: threadgroup}\n", "k.yaml:3:3: buffers: only threadgroup buffers"},
	} {
		src := "source: k.metal\n" + tt.buffers + "stages:\n  - {entry: k, threadgroups: [1], threads: [1]}\nsets:\n  s:\n    cases: [{T: 4}]\n"
		if _, err := Parse("k.yaml", []byte(src)); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %s", tt.buffers, err, tt.want)
		}
	}
}
