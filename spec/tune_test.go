package spec

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// tuneSpecText is a spec with two tunable parameters used in a define,
// the geometry, a constant, a struct value and a threadgroup buffer's size.
const tuneSpecText = `source: k.metal
vars: {W: 64}
defines:
  NSG: NSG
  TILE_BYTES: "(TILE*4)"
  NAME: '"NSG"'
constants:
  TILE_FC: {type: uint, value: TILE}
structs:
  P:
    - {name: nsg, type: uint, value: NSG}
buffers:
  - {name: a, index: 0, type: float, count: N, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: p, index: 1, type: P, count: 1, role: input}
  - {name: o, index: 2, type: float, count: N, role: output}
  - {name: tg, index: 0, type: float, count: TILE * NSG, role: threadgroup}
stages:
  - entry: k
    threadgroups: ["ceil_div(N, TILE)"]
    threads: [NSG * 32]
    defines: {TPG: NSG * 32}
sets:
  s:
    cases: [{N: 256}]
tune:
  params:
    NSG: [4, 2, 8, 16]
    TILE: {min: 16, max: 128, step: 16, default: 64}
  restrictions:
    - NSG * 32 <= 256
    - TILE % (NSG * 8) == 0
`

func mustTune(t *testing.T, src string) *Spec {
	t.Helper()
	s, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTuneParse(t *testing.T) {
	s := mustTune(t, tuneSpecText)
	ps := s.Params()
	if len(ps) != 2 {
		t.Fatalf("Params = %v, want NSG and TILE", ps)
	}
	if ps[0].Name != "NSG" || !slices.Equal(ps[0].Values, []int64{4, 2, 8, 16}) || ps[0].Default != 4 {
		t.Errorf("NSG = %+v, want values [4 2 8 16] in the order written, default the first", ps[0])
	}
	if ps[1].Name != "TILE" || !slices.Equal(ps[1].Values, []int64{16, 32, 48, 64, 80, 96, 112, 128}) || ps[1].Default != 64 {
		t.Errorf("TILE = %+v, want 16..128 step 16, default 64", ps[1])
	}
	if ps[0].Pos.String() != "k.yaml:27:5" || ps[1].Pos.String() != "k.yaml:28:5" {
		t.Errorf("positions %v %v, want k.yaml:27:5 and 28:5", ps[0].Pos, ps[1].Pos)
	}
	ps[0].Values[0] = 99
	if s.Params()[0].Values[0] != 4 {
		t.Error("Params shares its slices with the spec")
	}
	if got := s.DefaultPoint().String(); got != "NSG=4 TILE=64" {
		t.Errorf("DefaultPoint = %q, want NSG=4 TILE=64", got)
	}
	if got := s.Point().String(); got != "NSG=4 TILE=64" {
		t.Errorf("Point = %q, want the default", got)
	}
	if got := s.DefineParams(); len(got) != 1 || got["NSG"] != "NSG" {
		t.Errorf("DefineParams = %v, want NSG -> NSG only (TILE_BYTES is an expression of TILE)", got)
	}
}

func TestTuneShapes(t *testing.T) {
	tests := []struct {
		name, params string
		want         []int64
		def          int64
	}{
		{"list", "X: [3, 1, 2]", []int64{3, 1, 2}, 3},
		{"values default", "X: {values: [3, 1, 2], default: 2}", []int64{3, 1, 2}, 2},
		{"range", "X: {min: 1, max: 4}", []int64{1, 2, 3, 4}, 1},
		{"range step not reaching max", "X: {min: 1, max: 10, step: 4}", []int64{1, 5, 9}, 1},
		{"pow2", "X: {min: 3, max: 64, pow2: true, default: 16}", []int64{4, 8, 16, 32, 64}, 16},
		{"pow2 false", "X: {min: 2, max: 4, pow2: false}", []int64{2, 3, 4}, 2},
		{"negative", "X: {min: -2, max: 0}", []int64{-2, -1, 0}, -2},
		{"one value", "X: [7]", []int64{7}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustTune(t, minimalTune("  params:\n    "+tt.params+"\n"))
			p := s.Params()[0]
			if !slices.Equal(p.Values, tt.want) || p.Default != tt.def {
				t.Errorf("got %v default %d, want %v default %d", p.Values, p.Default, tt.want, tt.def)
			}
		})
	}
}

// minimalTune is a spec of one buffer with the given tune: section body.
func minimalTune(body string) string {
	return `source: k.metal
vars: {V: 1}
defines: {USE: "A B X"}
buffers:
  - {name: o, index: 0, type: float, count: N, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [1]}
sets:
  s:
    cases: [{N: 4}]
domains:
  N: {min: 1, max: 8}
tune:
` + body
}

func TestTuneErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"unknown name in restriction", "  params: {A: [1, 2]}\n  restrictions: [A < B]\n",
			`k.yaml:15:18: tune: restriction "A < B": unknown name "B": a restriction reads tune parameters only (have A)`},
		{"restriction reads a var", "  params: {A: [1, 2]}\n  restrictions: [A < N]\n", `k.yaml:15:18: tune: restriction "A < N": unknown name "N"`},
		{"default not a value", "  params:\n    A: {values: [1, 2], default: 3}\n", `k.yaml:15:34: tune parameter "A": default 3 is not one of its values [1 2]`},
		{"default off the step", "  params:\n    A: {min: 16, max: 128, step: 16, default: 20}\n", `k.yaml:15:47: tune parameter "A": default 20 is not one of its values [16 32 48 64 80 96 112 128]`},
		{"empty range", "  params:\n    A: {min: 8, max: 4}\n", `k.yaml:15:8: tune parameter "A": empty range: min 8 is above max 4`},
		{"empty pow2 range", "  params:\n    A: {min: 5, max: 7, pow2: true}\n", `k.yaml:15:8: tune parameter "A": empty range: no power of two in [5, 7]`},
		{"empty list", "  params:\n    A: []\n", `k.yaml:15:8: tune parameter "A": values: want a non-empty list of integers`},
		{"default violates", "  params: {A: [4, 8], B: [1, 2]}\n  restrictions:\n    - A * B <= 8\n    - A < 8\n    - B == 2\n",
			`k.yaml:18:7: tune: restriction "B == 2" does not hold at the default point A=4 B=1`},
		{"restriction not a condition", "  params: {A: [4, 8]}\n  restrictions: [A + 1]\n", `k.yaml:15:18: tune: restriction "A + 1" at A=4: want true or false, got 5`},
		{"restriction fails", "  params: {A: [0, 8]}\n  restrictions: [8 % A == 0]\n", `k.yaml:15:18: tune: restriction at A=0: expression "8 % A == 0": `},
		{"clash with a var", "  params: {V: [1, 2]}\n", `k.yaml:14:12: tune parameter "V": the name of a var`},
		{"clash with a case variable", "  params: {N: [1, 2]}\n", `k.yaml:14:12: tune parameter "N": the name of a domain variable`},
		{"clash with a function", "  params: {align: [1, 2]}\n", `tune parameter "align": the name of a function`},
		{"clash with an index", "  params: {i: [1, 2]}\n", `tune parameter "i": the name of an index variable`},
		{"keyword", "  params: {not: [1, 2]}\n", `tune parameter "not": a word of the expression language`},
		{"not an identifier", "  params: {A-B: [1, 2]}\n", `tune parameter "A-B": want an identifier`},
		{"too many points", "  params:\n    A: {min: 1, max: 1000}\n    B: {min: 1, max: 200}\n",
			`k.yaml:15:5: tune: params: the grid has 200000 points (A 1000 x B 200), over the limit of 100000`},
		{"range too long", "  params:\n    A: {min: 0, max: 9223372036854775807}\n", `k.yaml:15:8: tune parameter "A": range [0, 9223372036854775807] step 1 has 9223372036854775808 values, over the limit of 100000`},
		{"duplicate value", "  params: {A: [1, 2, 1]}\n", `k.yaml:14:22: tune parameter "A": value 1 listed twice`},
		{"not an integer", "  params: {A: [1, x]}\n", `k.yaml:14:19: tune parameter "A" value: want an integer, got "x"`},
		{"values and range", "  params:\n    A: {values: [1], min: 1}\n", `give values or a range`},
		{"step and pow2", "  params:\n    A: {min: 1, max: 8, step: 2, pow2: true}\n", `give step or pow2, not both`},
		{"zero step", "  params:\n    A: {min: 1, max: 8, step: 0}\n", `step 0: want at least 1`},
		{"no params", "  restrictions: [true]\n", `k.yaml:14:3: tune: missing params`},
		{"empty params", "  params: {}\n", `tune: params: want at least one parameter`},
		{"unknown field", "  params: {A: [1]}\n  strategy: grid\n", `k.yaml:15:3: tune: unknown field "strategy"`},
		{"a scalar", "  params: {A: 4}\n", `tune parameter "A": want a list of values, or a mapping`},
		{"duplicate param", "  params:\n    A: [1]\n    A: [2]\n", `duplicate key "A"`},
		{"read by nothing", "  params: {A: [1], Z: [1, 2]}\n  restrictions: [Z > 0]\n", `k.yaml:14:20: tune parameter "Z": nothing reads it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("k.yaml", []byte(minimalTune(tt.body)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestTuneNameUsable checks that an expression may read a parameter and
// that a name that is neither a parameter nor a variable is still refused.
func TestTuneNameUsable(t *testing.T) {
	src := strings.Replace(tuneSpecText, "threads: [NSG * 32]", "threads: [NSG * 32 * Q]", 1)
	_, err := Parse("k.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `unknown variable "Q"`) {
		t.Fatalf("got %v, want Q unknown", err)
	}
	src = strings.Replace(tuneSpecText, "tune:\n  params:\n", "tune:\n  params:\n    N: [1]\n", 1)
	if _, err := Parse("k.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), `k.yaml:27:5: tune parameter "N": the name of a variable of case s/N=256`) {
		t.Errorf("a parameter named like a case variable: %v", err)
	}
	src = strings.Replace(tuneSpecText, "tune:\n  params:\n", "tune:\n  params:\n    Q: [1]\n", 1)
	src = strings.Replace(src, "threads: [NSG * 32]", "threads: [NSG * 32 * Q]", 1)
	mustTune(t, src)
}

func TestTunePoints(t *testing.T) {
	s := mustTune(t, tuneSpecText)
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pts {
		got = append(got, p.String())
	}
	// NSG 16 has 512 threads; TILE must be a multiple of NSG*8.
	want := []string{"NSG=4 TILE=64", "NSG=4 TILE=32", "NSG=4 TILE=96", "NSG=4 TILE=128",
		"NSG=2 TILE=16", "NSG=2 TILE=32", "NSG=2 TILE=48", "NSG=2 TILE=64", "NSG=2 TILE=80", "NSG=2 TILE=96", "NSG=2 TILE=112", "NSG=2 TILE=128",
		"NSG=8 TILE=64", "NSG=8 TILE=128"}
	if !slices.Equal(got, want) {
		t.Errorf("Points =\n%v\nwant\n%v", got, want)
	}
	// A restriction that cuts: TILE % (NSG*8) == 0.
	src := strings.Replace(tuneSpecText, "TILE % (NSG * 8) == 0", "TILE % (NSG * 16) == 0", 1)
	s = mustTune(t, src)
	pts, err = s.Points()
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, p := range pts {
		got = append(got, p.String())
		if ok, err := s.Allowed(p); !ok || err != nil {
			t.Errorf("Allowed(%s) = %v, %v for a listed point", p, ok, err)
		}
	}
	want = []string{"NSG=4 TILE=64", "NSG=4 TILE=128", "NSG=2 TILE=32", "NSG=2 TILE=64", "NSG=2 TILE=96", "NSG=2 TILE=128", "NSG=8 TILE=128"}
	if !slices.Equal(got, want) {
		t.Errorf("Points =\n%v\nwant\n%v", got, want)
	}
	for _, tt := range []struct {
		p    string
		ok   bool
		fail string
	}{
		{"NSG=4 TILE=48", false, ""},
		{"NSG=8 TILE=128", true, ""},
		{"TILE=128 NSG=8", true, ""},
		{"NSG=2", true, ""}, // TILE at its default 64
		{"NSG=8", false, ""},
		{"NSG=16 TILE=128", false, ""},
		{"NSG=3", false, `NSG = 3 is not one of its values [4 2 8 16]`},
		{"X=1", false, `no tune parameter "X" (have NSG, TILE)`},
	} {
		p, err := ParsePoint(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := s.Allowed(p)
		if tt.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tt.fail) {
				t.Errorf("Allowed(%s) = %v, %v, want error %q", tt.p, ok, err, tt.fail)
			}
			continue
		}
		if err != nil || ok != tt.ok {
			t.Errorf("Allowed(%s) = %v, %v, want %v", tt.p, ok, err, tt.ok)
		}
	}
}

func TestTuneNoSection(t *testing.T) {
	s := mustTune(t, strings.Split(minimalTune(""), "tune:")[0])
	if s.Params() != nil || len(s.DefaultPoint()) != 0 {
		t.Errorf("Params %v, DefaultPoint %v, want none", s.Params(), s.DefaultPoint())
	}
	pts, err := s.Points()
	if err != nil || len(pts) != 1 || len(pts[0]) != 0 {
		t.Errorf("Points = %v, %v, want the one empty point", pts, err)
	}
	s2, err := s.At(Point{})
	if err != nil || s2.Digest != s.Digest {
		t.Errorf("At(empty) = %v, digest kept %v", err, err == nil && s2.Digest == s.Digest)
	}
	if _, err := s.At(Point{{"NSG", 2}}); err == nil || !strings.Contains(err.Error(), "the spec has no tune: section") {
		t.Errorf("At(NSG=2) on a spec without tune: %v", err)
	}
	if len(s.DefineParams()) != 0 {
		t.Errorf("DefineParams = %v", s.DefineParams())
	}
}

func TestTuneAt(t *testing.T) {
	s := mustTune(t, tuneSpecText)
	base := mustInstances(t, s)[0]
	at, err := s.At(Point{{"NSG", 8}, {"TILE", 128}})
	if err != nil {
		t.Fatal(err)
	}
	in := mustInstances(t, at)[0]
	if got := base.Stages[0].Threads.X; got != 128 {
		t.Errorf("baseline threads %d, want 4*32", got)
	}
	if got := in.Stages[0].Threads.X; got != 256 {
		t.Errorf("threads at NSG=8 = %d, want 256", got)
	}
	if got := base.Stages[0].Threadgroups.X; got != 4 {
		t.Errorf("baseline threadgroups %d, want 256/64", got)
	}
	if got := in.Stages[0].Threadgroups.X; got != 2 {
		t.Errorf("threadgroups at TILE=128 = %d, want 2", got)
	}
	if got := in.Buffer("tg").Count; got != 128*8 {
		t.Errorf("tg count %d, want 1024", got)
	}
	if got := base.Buffer("tg").Count; got != 64*4 {
		t.Errorf("baseline tg count %d, want 256", got)
	}
	wantDefs := map[string]string{"NSG": "8", "TILE_BYTES": "(128*4)", "NAME": `"NSG"`, "TPG": "8 * 32"}
	for k, v := range wantDefs {
		if got := in.Stages[0].Defines[k]; got != v {
			t.Errorf("define %s = %q, want %q", k, got, v)
		}
	}
	if got := base.Stages[0].Defines["NSG"]; got != "4" {
		t.Errorf("baseline define NSG = %q, want 4", got)
	}
	if got := in.Stages[0].Constants["TILE_FC"].Bits; got != 128 {
		t.Errorf("constant TILE_FC = %d, want 128", got)
	}
	if got := in.Buffer("p").Data[0]; got != 8 {
		t.Errorf("struct field nsg = %d, want 8", got)
	}
	if in.Stages[0].ConfigKey() == base.Stages[0].ConfigKey() {
		t.Error("the point's compile key equals the baseline's")
	}
	if !slices.Equal(in.Buffer("a").Data, base.Buffer("a").Data) {
		t.Error("a point changed an input's bytes")
	}
	// s itself is unchanged.
	again := mustInstances(t, s)[0]
	if again.Stages[0].Threads.X != 128 || s.Point().String() != "NSG=4 TILE=64" {
		t.Errorf("At changed s: threads %d, point %s", again.Stages[0].Threads.X, s.Point())
	}
	if got := at.Point().String(); got != "NSG=8 TILE=128" {
		t.Errorf("Point = %q", got)
	}
	// At from a tuned spec starts again from the defaults.
	at2, err := at.At(Point{{"NSG", 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := at2.Point().String(); got != "NSG=2 TILE=64" {
		t.Errorf("at.At(NSG=2).Point = %q, want NSG=2 TILE=64", got)
	}
	// Refusals.
	if _, err := s.At(Point{{"NSG", 8}, {"TILE", 96}}); err == nil || !strings.Contains(err.Error(), "k.yaml:31:7: point NSG=8 TILE=96: restriction \"TILE % (NSG * 8) == 0\" does not hold") {
		t.Errorf("At(NSG=8 TILE=96) = %v", err)
	}
	if _, err := s.At(Point{{"NSG", 32}}); err == nil || !strings.Contains(err.Error(), "k.yaml:27:5: point: NSG = 32 is not one of its values") {
		t.Errorf("At(NSG=32) = %v", err)
	}
}

// TestTuneAtLimits checks that At refuses a point at which the domains'
// largest case is past a limit, as Parse refuses such a default, and that
// Instantiate refuses a point's threads past the limit at the spec's text.
func TestTuneAtLimits(t *testing.T) {
	src := strings.Replace(tuneSpecText, "    NSG: [4, 2, 8, 16]", "    NSG: [4, 2, 8, 16, 64]", 1)
	src = strings.Replace(src, "    - NSG * 32 <= 256\n    - TILE % (NSG * 8) == 0\n", "    - TILE % NSG == 0\n", 1)
	s := mustTune(t, src)
	// No domains: Instantiate finds it.
	at, err := s.At(Point{{"NSG", 64}})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := at.Cases()
	if _, err := at.Instantiate(cs[0]); err == nil || !strings.Contains(err.Error(), "k.yaml:20:15: case s/N=256: threads 2048: 2048 threads per threadgroup, over Metal's 1024") {
		t.Errorf("Instantiate at NSG=64: %v", err)
	}
	src = strings.Replace(src, "sets:\n", "domains:\n  N: {min: 1, max: 512}\nsets:\n", 1)
	s = mustTune(t, src)
	if _, err := s.At(Point{{"NSG", 64}}); err == nil || !strings.Contains(err.Error(), "point NSG=64 TILE=64: k.yaml:23:3: domains: the largest case of set s (N=512) is past a limit") {
		t.Errorf("At(NSG=64) with domains: %v", err)
	}
}

// TestTuneDigest checks that a point other than the default has a digest
// of its own, that the default keeps the file's, and that equal points
// have equal digests whichever way they are written.
func TestTuneDigest(t *testing.T) {
	s := mustTune(t, tuneSpecText)
	d, err := s.At(s.DefaultPoint())
	if err != nil {
		t.Fatal(err)
	}
	if d.Digest != s.Digest {
		t.Error("the default point changed the digest")
	}
	a, _ := s.At(Point{{"NSG", 2}})
	b, _ := s.At(Point{{"TILE", 64}, {"NSG", 2}})
	c, _ := s.At(Point{{"NSG", 8}})
	if a == nil || b == nil || c == nil {
		t.Fatal("At failed")
	}
	if a.Digest == s.Digest || a.Digest == c.Digest {
		t.Error("points share a digest")
	}
	if a.Digest != b.Digest {
		t.Error("one point written two ways has two digests")
	}
	if a.FileDigest() != s.Digest || s.FileDigest() != s.Digest {
		t.Error("FileDigest depends on the point")
	}
	back, err := a.At(s.DefaultPoint())
	if err != nil || back.Digest != s.Digest {
		t.Errorf("back at the default: %v, digest restored %v", err, err == nil && back.Digest == s.Digest)
	}
	// The digest of a point round-trips through its string.
	p, err := ParsePoint(a.Point().String())
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.At(p)
	if err != nil || e.Digest != a.Digest {
		t.Errorf("At(ParsePoint(String)) = %v, same digest %v", err, err == nil && e.Digest == a.Digest)
	}
	// A Load of the same bytes is the default point's digest.
	s2 := mustTune(t, tuneSpecText)
	if s2.Digest != s.Digest {
		t.Error("two parses of one text differ")
	}
}

func TestParsePoint(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"NSG=4 TILE=64", "NSG=4 TILE=64", ""},
		{"NSG=4,TILE=-64", "NSG=4 TILE=-64", ""},
		{"  A=1\tB=2 ", "A=1 B=2", ""},
		{"", "", ""},
		{"NSG", "", "want NAME=integer"},
		{"NSG=x", "", "want NAME=integer"},
		{"4=4", "", "want NAME=integer"},
		{"A=1 A=2", "", "A set twice"},
	} {
		p, err := ParsePoint(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParsePoint(%q) = %v, %v, want error %q", tt.in, p, err, tt.err)
			}
			continue
		}
		if err != nil || p.String() != tt.want {
			t.Errorf("ParsePoint(%q) = %q, %v, want %q", tt.in, p, err, tt.want)
		}
	}
}

func TestSubstParams(t *testing.T) {
	vals := map[string]int64{"NSG": 8, "T": 2}
	for _, tt := range []struct{ in, want string }{
		{"NSG", "8"},
		{" NSG ", " 8 "},
		{"NSG*T", "8*2"},
		{"NSGX + XNSG + NSG_", "NSGX + XNSG + NSG_"},
		{"2NSG", "2NSG"},
		{`"NSG" 'T' NSG`, `"NSG" 'T' 8`},
		{`"a\"NSG" T`, `"a\"NSG" 2`},
		{"f(NSG,T)", "f(8,2)"},
	} {
		if got := substParams(tt.in, vals); got != tt.want {
			t.Errorf("substParams(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPointJSON checks that a point is one string in JSON and reads back.
func TestPointJSON(t *testing.T) {
	type rec struct {
		Point Point `json:"point"`
	}
	b, err := json.Marshal(rec{Point{{"NSG", 4}, {"TILE", -64}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"point":"NSG=4 TILE=-64"}` {
		t.Errorf("JSON %s", b)
	}
	var r rec
	if err := json.Unmarshal(b, &r); err != nil || r.Point.String() != "NSG=4 TILE=-64" {
		t.Errorf("read back %v, %v", r.Point, err)
	}
	if err := json.Unmarshal([]byte(`{"point":"NSG"}`), &r); err == nil {
		t.Error("a bad point read without error")
	}
	b, _ = json.Marshal(rec{Point{}})
	if string(b) != `{"point":""}` {
		t.Errorf("empty point JSON %s", b)
	}
}

// TestTuneCheckKernels checks that the kernel checker reads the source
// with the point's defines: at NSG=8 the kernel takes a parameter nothing
// is bound to, at the default it does not.
func TestTuneCheckKernels(t *testing.T) {
	const specText = `source: k.metal
defines: {NSG: NSG}
buffers:
  - {name: o, index: 0, type: float, count: NSG * 32, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [NSG * 32]}
sets:
  s:
    cases: [{}]
tune:
  params: {NSG: [4, 8]}
`
	const metal = `#include <metal_stdlib>
using namespace metal;
#ifndef NSG
#define NSG 2
#endif
kernel void k(device float *o [[buffer(0)]],
#if NSG == 8
              device float *extra [[buffer(5)]],
#endif
              uint i [[thread_position_in_grid]]) {
  o[i] = float(NSG);
}
`
	s := mustTune(t, specText)
	check := func(s *Spec) error {
		cs, _ := s.Cases()
		in, err := s.Instantiate(cs[0])
		if err != nil {
			t.Fatal(err)
		}
		if in.Stages[0].Threads.X != int(s.Point()[0].Value)*32 || in.Buffer("o").Count != in.Stages[0].Threads.X {
			t.Errorf("point %s: threads %d, o count %d", s.Point(), in.Stages[0].Threads.X, in.Buffer("o").Count)
		}
		return in.CheckKernels(func(path string) ([]byte, error) { return []byte(metal), nil })
	}
	if err := check(s); err != nil {
		t.Errorf("default point: %v", err)
	}
	at, err := s.At(Point{{"NSG", 8}})
	if err != nil {
		t.Fatal(err)
	}
	if err := check(at); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("NSG=8: %v, want the unbound extra parameter", err)
	}
}

func TestParamUses(t *testing.T) {
	s := mustTune(t, tuneSpecText)
	var got []string
	for _, u := range s.ParamUses("NSG") {
		got = append(got, u.What+" @"+u.Pos.String())
	}
	want := []string{
		"define NSG @k.yaml:4:8",
		`define TPG of stage "k" @k.yaml:21:20`,
		"field nsg of struct P @k.yaml:11:38",
		`count of buffer "tg" @k.yaml:16:46`,
		`threads of stage "k" @k.yaml:20:15`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("ParamUses(NSG) =\n%q\nwant\n%q", got, want)
	}
	got = got[:0]
	for _, u := range s.ParamUses("TILE") {
		got = append(got, u.What)
	}
	want = []string{"define TILE_BYTES", "constant TILE_FC", `count of buffer "tg"`, `threadgroups of stage "k"`}
	if !slices.Equal(got, want) {
		t.Errorf("ParamUses(TILE) = %q, want %q", got, want)
	}
	if u := s.ParamUses("W"); len(u) != 0 {
		t.Errorf("ParamUses(W) = %v for a var nothing reads", u)
	}
}
