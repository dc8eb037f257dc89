package directive

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"metalab/internal/testenv"
)

// genMacros are the macros the generated conditions may use, defined at
// the top of each generated file: numbers of each kind, expressions that
// bind loosely, macros naming macros, a function-like one and a
// self-reference. Names beginning with N are never defined.
var genMacros = []struct{ name, body string }{
	{"M1", "1"}, {"M0", "0"}, {"MU", "0u"}, {"MBIG", "0xffffffffffffffff"}, {"MNEG", "-1"},
	{"MSUM", "1 + 2"}, {"MOR", "0 || 1"}, {"MPAR", "(MSUM)"}, {"MREF", "M1"}, {"MSELF", "MSELF + 1"},
	{"MEMPTY", ""}, {"MF(x)", "x"}, {"M7L", "7L"}, {"MULL", "3ull"},
}

// genExpr writes a random #if expression of about depth levels.
func genExpr(r *rand.Rand, depth int) string {
	if depth <= 0 || r.Intn(4) == 0 {
		switch r.Intn(10) {
		case 0, 1:
			return []string{"0", "1", "2", "7", "63", "64", "0u", "1u", "10U", "0x7f", "010", "0b101", "1'000", "9223372036854775807", "18446744073709551615", "'a'", "'\\n'", "5l", "2LL", "3UL"}[r.Intn(20)]
		case 2:
			return fmt.Sprint(r.Intn(200) - 100)
		case 3:
			return []string{"N1", "N2", "true", "false"}[r.Intn(4)]
		case 4:
			return "defined(" + []string{"M1", "N1", "MF", "MEMPTY"}[r.Intn(4)] + ")"
		default:
			m := genMacros[r.Intn(len(genMacros))].name
			if m == "MF(x)" {
				return "MF"
			}
			if m == "MEMPTY" {
				return "MEMPTY 1"
			}
			return m
		}
	}
	switch r.Intn(5) {
	case 0:
		return []string{"-", "!", "~", "+"}[r.Intn(4)] + genExpr(r, depth-1)
	case 1:
		return "(" + genExpr(r, depth-1) + ")"
	case 2:
		return genExpr(r, depth-1) + " ? " + genExpr(r, depth-1) + " : " + genExpr(r, depth-1)
	}
	ops := []string{"||", "&&", "|", "^", "&", "==", "!=", "<", ">", "<=", ">=", "<<", ">>", "+", "-", "*", "/", "%"}
	return genExpr(r, depth-1) + " " + ops[r.Intn(len(ops))] + " " + genExpr(r, depth-1)
}

// TestEvalAgainstCompiler evaluates random conditions with Eval and with
// the C++ compiler's preprocessor: wherever Eval answers, the compiler
// must take the same branch.
func TestEvalAgainstCompiler(t *testing.T) {
	cxx, err := testenv.CXX()
	if err != nil {
		testenv.Missing(t, "no C++ compiler to hold #if evaluation to: "+err.Error())
		return
	}
	r := rand.New(rand.NewSource(20))
	n := 1500
	if testing.Short() {
		n = 300
	}
	defs := map[string]string{}
	var b strings.Builder
	for _, m := range genMacros {
		fmt.Fprintf(&b, "#define %s %s\n", m.name, m.body)
		name, _, _ := strings.Cut(m.name, "(")
		defs[name] = m.body
		if name != m.name {
			defs[name] = "F"
		}
	}
	exprs := make([]string, n)
	for i := range exprs {
		exprs[i] = genExpr(r, 1+r.Intn(5))
		fmt.Fprintf(&b, "#if %s\nR%d_1\n#else\nR%d_0\n#endif\n", exprs[i], i, i)
	}
	cmd := testenv.Command(cxx, "-E", "-P", "-x", "c++", "-w", "-")
	cmd.Stdin = strings.NewReader(b.String())
	out, _ := cmd.Output() // conditions the compiler rejects make it fail; Eval answers none of them
	took := map[string]bool{}
	for _, line := range strings.Fields(string(out)) {
		took[line] = true
	}
	if len(took) == 0 {
		t.Fatalf("%s -E printed nothing", cxx[0])
	}
	answered := 0
	for i, e := range exprs {
		v, ok := Eval(e, macros(defs))
		if !ok {
			continue
		}
		answered++
		want := fmt.Sprintf("R%d_%d", i, map[bool]int{true: 1, false: 0}[v.V != 0])
		if !took[want] {
			t.Errorf("#if %s: Eval says %d (unsigned %v); the compiler takes the other branch", e, v.V, v.Unsigned)
		}
	}
	if answered < n/2 {
		t.Errorf("Eval answered only %d of %d conditions", answered, n)
	}
	t.Logf("%d of %d conditions answered, all as %s", answered, n, cxx[0])
}

// FuzzEval: evaluation never panics, and a condition and its negation
// agree.
func FuzzEval(f *testing.F) {
	for _, s := range []string{"1 + 2 * 3", "defined(M1) && MSUM > 2", "-1 > 0u ? 1 : 2", "(((1)))", "1 << 63", "MSELF", "'\\x41'"} {
		f.Add(s)
	}
	defs := map[string]string{"M1": "1", "MSUM": "1 + 2", "MSELF": "MSELF + 1", "MF": "F"}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := Eval(s, macros(defs))
		w, ok2 := Eval("!("+s+")", macros(defs))
		if ok && !strings.Contains(s, "//") && ok2 != ok || ok && ok2 && (v.V == 0) != (w.V != 0) {
			t.Errorf("Eval(%q) = %v, %v but its negation %v, %v", s, v, ok, w, ok2)
		}
	})
}
