package directive

import (
	"reflect"
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	// A comment is a blank: a '#' after one that starts a line starts a
	// directive; literals, comments and raw strings hide a '#'; a splice
	// continues a directive and a line comment.
	src := "#define A 1\n  # include \"x.h\"\nint s = \"#not\"; // #not\n/* #not\n#not */ #define B\nx; /* a\n */ #not\n#if A \\\n  && B\nR\"(\n#not\n)\" x;\n/**/ #define C\n'#' #not\n" +
		"// a comment \\\n#not\n#define D /* a\ncomment */ 4\n#define S \"/*\" x\n#define E\r\n"
	var got []string
	for _, d := range Scan(src) {
		got = append(got, src[d.Pos:d.End])
		if src[d.Next-1:d.Next] == "\\" || d.Next < len(src) && src[d.Next] != '\n' {
			t.Errorf("directive %q: Next %d is not a line break", src[d.Pos:d.End], d.Next)
		}
	}
	want := []string{"#define A 1", "# include \"x.h\"", "#define B", "#if A \\\n  && B", "#define C", "#define D /* a\ncomment */ 4", "#define S \"/*\" x", "#define E"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("directives %q,\nwant %q", got, want)
	}
}

func TestSplit(t *testing.T) {
	tests := []struct{ give, name, rest string }{
		{"#define X 1", "define", " X 1"},
		{"  #  include \"a.h\"", "include", " \"a.h\""},
		{"# /* c */ pragma once", "pragma", " once"},
		{"#\\\ndefine X", "define", " X"},
		{"#def\\\nine X", "define", " X"},
		{"#", "", ""},
		{"# 12 \"f\"", "12", " \"f\""}, // a line marker: its "name" is the number
	}
	for _, tt := range tests {
		name, rest := Split(tt.give)
		if name != tt.name || rest != tt.rest {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", tt.give, name, rest, tt.name, tt.rest)
		}
	}
}

func TestParseDefine(t *testing.T) {
	tests := []struct {
		rest string
		want Def
		msg  string
	}{
		{" X 1", Def{Name: "X", Body: "1", BodyOff: 3}, ""},
		{" F(a, b) a ## b", Def{Name: "F", FuncLike: true, Params: []string{"a", "b"}, Body: "a ## b", BodyOff: 9}, ""},
		{" G (a) a", Def{Name: "G", Body: "(a) a", BodyOff: 3}, ""},
		{" H\\\n(x) x", Def{Name: "H", FuncLike: true, Params: []string{"x"}, Body: "x", BodyOff: 8}, ""},
		{" V(...) __VA_ARGS__", Def{Name: "V", FuncLike: true, Params: []string{"..."}, Body: "__VA_ARGS__", BodyOff: 8}, ""},
		{" E", Def{Name: "E", BodyOff: -1}, ""},
		{" ", Def{}, "#define without a macro name"},
		{" 1X", Def{}, "#define without a macro name"},
		{" F(a", Def{}, "unterminated macro parameter list"},
	}
	for _, tt := range tests {
		got, msg := ParseDefine(tt.rest)
		if !reflect.DeepEqual(got, tt.want) || msg != tt.msg {
			t.Errorf("ParseDefine(%q) = %+v, %q; want %+v, %q", tt.rest, got, msg, tt.want, tt.msg)
		}
	}
}

func TestInclude(t *testing.T) {
	tests := []struct {
		rest, name string
		angle, ok  bool
	}{
		{` "a.h"`, "a.h", false, true},
		{` <metal_stdlib> // c`, "metal_stdlib", true, true},
		{` "a//b.h" /* c */`, "a//b.h", false, true},
		{" \\\n \"c.h\"", "c.h", false, true},
		{` HDR`, "", false, false},
		{` "open`, "", false, false},
	}
	for _, tt := range tests {
		name, angle, ok := Include(tt.rest)
		if name != tt.name || angle != tt.angle || ok != tt.ok {
			t.Errorf("Include(%q) = %q, %v, %v; want %q, %v, %v", tt.rest, name, angle, ok, tt.name, tt.angle, tt.ok)
		}
	}
}

func TestJoinAndComments(t *testing.T) {
	if got := Join("a\\\nb\\\r\nc\\d"); got != "abc\\d" {
		t.Errorf("Join = %q", got)
	}
	if got := StripComments(`"a//b.h" /* x */ y // z`); got != `"a//b.h"   y ` {
		t.Errorf("StripComments = %q", got)
	}
	if got := Operand(" X /* c */ \\\n "); got != "X" {
		t.Errorf("Operand = %q", got)
	}
	if got, _ := BlockCommentEnd("/* a *\\\n/ b", 0); got != 9 {
		t.Errorf("BlockCommentEnd through a splice = %d, want 9", got)
	}
	if got := LineCommentEnd("// a \\\n b\nc", 0); got != 9 {
		t.Errorf("LineCommentEnd = %d, want 9", got)
	}
	if got := LF([]byte("a\rb\r\nc")); got != "a\nb\r\nc" {
		t.Errorf("LF = %q", got)
	}
}

// macros is a Lookup of a fixed table: names in it are defined as given
// (a body "F" marks a function-like macro), names beginning with an
// underscore unknown, others undefined.
func macros(defs map[string]string) Lookup {
	return func(name string) Macro {
		if b, ok := defs[name]; ok {
			if b == "F" {
				return Macro{Defined: Yes, FuncLike: true}
			}
			return Macro{Defined: Yes, Body: b}
		}
		if strings.HasPrefix(name, "_") {
			return Macro{}
		}
		return Macro{Defined: No}
	}
}

func TestEval(t *testing.T) {
	defs := map[string]string{"ONE": "1", "SUM": "1 + 2", "U": "0u", "SELF": "SELF + 1", "A": "B", "B": "A", "E": "", "F": "F", "HEX": "0x10", "NEG": "-1", "NEST": "(SUM) * 2"}
	tests := []struct {
		expr string
		v    int64
		u    bool
		ok   bool
	}{
		{"1", 1, false, true},
		{"ONE + 1", 2, false, true},
		{"SUM * 2", 5, false, true}, // tokens, not a value: 1 + 2 * 2
		{"NEST", 6, false, true},
		{"UNDEFINED", 0, false, true},
		{"defined(ONE) && defined ONE && !defined(NOPE)", 1, false, true},
		{"defined(_X)", 0, false, false},
		{"_X", 0, false, false},
		{"0 && _X", 0, false, true},
		{"_X && 0", 0, false, true},
		{"1 || _X", 1, false, true},
		{"_X || 1", 1, false, true},
		{"_X ? 2 : 2", 2, false, true},
		{"_X ? 2 : 3", 0, false, false},
		{"-1 > 0u", 1, false, true},
		{"-1 > U", 1, false, true},
		{"NEG < 0", 1, false, true},
		{"0u - 1", -1, true, true},
		{"(1 ? -1 : 0u) > 0", 1, false, true},
		{"(1 ? -1 : _X) > 0", 0, false, false}, // the unknown arm's type decides
		{"1 << 63 < 0", 1, false, true},
		{"1 << 64", 0, false, false},
		{"-1 >> 63", -1, false, true},
		{"HEX == 16 && 010 == 8 && 0b11 == 3 && 1'000 == 1000", 1, false, true},
		{"18446744073709551615 == -1", 1, false, true},
		{"18446744073709551616", 0, false, false},
		{"'a' == 97 && '\\n' == 10 && '\\x41' == 65 && '\\101' == 65", 1, false, true},
		{"L'a'", 0, false, false},
		{"1 / 0", 0, false, false},
		{"0 && 1 / 0", 0, false, true},
		{"1 ? 2 : 1 / 0", 2, false, true},
		{"1.0", 0, false, false},
		{"1 +", 0, false, false},
		{"(1", 0, false, false},
		{"\"s\"", 0, false, false},
		{"E", 0, false, false}, // an empty expression
		{"E 1", 1, false, true},
		{"SELF", 1, false, true}, // SELF + 1 with the inner SELF hidden: 0 + 1
		{"A", 0, false, true},    // A -> B -> A, hidden: 0
		{"F", 0, false, true},    // a function-like macro's name alone is not a use
		{"F(1)", 0, false, false},
		{"true + true", 2, false, true},
		{"ONE /* c */ + /* d */ 1 // e", 2, false, true},
		{"ONE ? 1 : 2 , 3", 0, false, false},
		{"5 % 3 == 2 && -5 / 2 == -2 && -5 % 2 == -1", 1, false, true},
		{"~0u == 0xffffffffffffffff && ~0 == -1", 1, false, true},
		{"(2 | 1) ^ 4 & 7", 7, false, true},
		{"1 10", 0, false, false},
	}
	for _, tt := range tests {
		v, ok := Eval(tt.expr, macros(defs))
		if ok != tt.ok || ok && (v.V != tt.v || v.Unsigned != tt.u) {
			t.Errorf("Eval(%q) = %+v, %v; want {%d %v}, %v", tt.expr, v, ok, tt.v, tt.u, tt.ok)
		}
	}
}

func TestEvalBounded(t *testing.T) {
	defs := map[string]string{"X0": "1"}
	for i := 1; i < 40; i++ {
		defs["X"+string(rune('0'+i%10))+strings.Repeat("x", i)] = ""
	}
	// An exponential macro: each level doubles.
	big := map[string]string{"A0": "1"}
	names := []string{"A0"}
	for i := 1; i < 30; i++ {
		n := "A" + strings.Repeat("a", i)
		big[n] = names[i-1] + " + " + names[i-1]
		names = append(names, n)
	}
	if _, ok := Eval(names[len(names)-1], macros(big)); ok {
		t.Errorf("an exponential expansion was evaluated")
	}
	if _, ok := Eval(strings.Repeat("(", 10000)+"1"+strings.Repeat(")", 10000), macros(defs)); ok {
		t.Errorf("deep nesting was evaluated")
	}
}

func TestCond(t *testing.T) {
	defs := map[string]string{"X": "1", "Z": "0"}
	tests := []struct {
		kind, rest string
		want       Tri
	}{
		{"ifdef", " X", Yes},
		{"ifdef", " Y", No},
		{"ifndef", " X /* c */", No},
		{"ifdef", " _Y", Unknown},
		{"ifdef", " X Y", Unknown},
		{"elifndef", " Y", Yes},
		{"if", " X && \\\n !Z", Yes},
		{"elif", " Z", No},
		{"if", " _M", Unknown},
	}
	for _, tt := range tests {
		if got := Cond(tt.kind, tt.rest, macros(defs)); got != tt.want {
			t.Errorf("Cond(%s, %q) = %v, want %v", tt.kind, tt.rest, got, tt.want)
		}
	}
}

func TestGroup(t *testing.T) {
	// #if 0 / #elif _U / #elif 1 / #else: skipped, undecided, undecided, undecided.
	g := &Group{}
	g.Enter(No)
	var got []Tri
	got = append(got, g.Branch)
	got = append(got, g.Elif(func() Tri { return Unknown }))
	got = append(got, g.Elif(func() Tri { return Yes }))
	got = append(got, g.Else())
	if want := []Tri{No, Unknown, Unknown, Unknown}; !reflect.DeepEqual(got, want) {
		t.Errorf("branches %v, want %v", got, want)
	}
	h := &Group{}
	h.Enter(Yes)
	if h.Elif(func() Tri { t.Error("a condition after a taken branch was evaluated"); return Yes }) != No || h.Else() != No {
		t.Error("a branch after a taken one is not skipped")
	}
	if Region([]*Group{g, h}) != No || Region([]*Group{g}) != Unknown || Region(nil) != Yes {
		t.Error("Region")
	}
}

func TestTable(t *testing.T) {
	tb := &Table{Default: func(string) Macro { return Macro{Defined: No} }}
	tb.Define(Def{Name: "A", Body: "1"}, true)
	tb.Define(Def{Name: "F", FuncLike: true, Body: "x"}, true)
	tb.Define(Def{Name: "B", Body: "2"}, false)
	tb.Undef("C", false) // undefined either way
	tb.Undef("A", false)
	want := map[string]Macro{"A": {}, "F": {Defined: Yes, FuncLike: true}, "B": {}, "C": {Defined: No}, "D": {Defined: No}}
	for name, w := range want {
		if got := tb.Lookup(name); got != w {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
	}
	tb.Undef("A", true)
	if tb.Lookup("A").Defined != No {
		t.Error("a sure #undef leaves the name defined")
	}
	// A body of more than one operand, possibly in effect, decides nothing:
	// #if OR && 0 is 1 when OR is 1 || 1.
	tb.Define(Def{Name: "OR", Body: "1 || 1"}, false)
	tb.Define(Def{Name: "N", Body: "2"}, false)
	if _, ok := Eval("OR && 0", tb.Lookup); ok {
		t.Error("a condition using a possibly multi-operand macro was decided")
	}
	if v, ok := Eval("N && 0", tb.Lookup); !ok || v.V != 0 {
		t.Error("N && 0 with N one unknown operand: not decided 0")
	}
	tb.Define(Def{Name: "S", Body: "1 + 1"}, true)
	tb.Define(Def{Name: "S", Body: "1"}, false)
	if !tb.Lookup("S").Opaque {
		t.Error("a one-operand #define in an undecided branch hides the earlier two-operand body")
	}
}

func TestInEffect(t *testing.T) {
	// #define at 10, #undef at 20, #define at 30.
	pos := []int{10, 20, 30}
	undef := []bool{false, true, false}
	p := func(i int) int { return pos[i] }
	u := func(i int) bool { return undef[i] }
	tests := []struct {
		at        int
		i         int
		undefined bool
	}{{5, -1, false}, {15, 0, false}, {25, -1, true}, {31, 2, false}, {0, 2, false}}
	for _, tt := range tests {
		i, undefined := InEffect(3, p, u, tt.at)
		if i != tt.i || undefined != tt.undefined {
			t.Errorf("InEffect at %d = %d, %v; want %d, %v", tt.at, i, undefined, tt.i, tt.undefined)
		}
	}
	if i, _ := InEffect(2, p, u, 0); i != 0 {
		t.Errorf("InEffect at 0 with a trailing #undef = %d, want 0", i)
	}
}
