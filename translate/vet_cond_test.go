package translate

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/internal/testenv"
	"metalab/msl"
)

// branches vets src and returns the names beginning with B_ that end up in
// code the vetting pass treats as compiled (live) and as skipped.
func branches(t *testing.T, src string, defines map[string]string, files map[string]string) (live, skipped []string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	v := newVetter(backend.Source{Name: "k.metal", Text: []byte(src), Dir: dir, Defines: defines}, nil, true)
	v.run()
	if v.fatal != nil {
		t.Fatal(v.fatal)
	}
	for _, tk := range v.toks {
		if !strings.HasPrefix(tk.Text, "B_") {
			continue
		}
		if tk.skipped {
			skipped = append(skipped, tk.Text)
		} else {
			live = append(live, tk.Text)
		}
	}
	sort.Strings(live)
	sort.Strings(skipped)
	return live, skipped
}

func TestVetConditions(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		defines map[string]string
		files   map[string]string
		live    []string // the branches the compiler may take
	}{
		{"if 0", "#if 0\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else"}},
		{"defined macro", "#define X 1\n#if X\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_then"}},
		{"never defined", "#if X\nB_then\n#endif\n#ifdef Y\nB_y\n#endif\n#ifndef Z\nB_z\n#endif\n", nil, nil, []string{"B_z"}},
		{"unsigned as the compiler computes it", "#if -1 > 0u\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_then"}},
		{"hex as the compiler reads it", "#if 0x10 > 2\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_then"}},
		{"a body is substituted as tokens", "#define A 1 + 2\n#if A * 2 == 5\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_then"}},
		{"a splice continues a line comment", "// a comment \\\n#define X 1\n#ifdef X\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else"}},
		{"an undefined name after expansion is 0", "#define A B\n#if A\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else"}},
		{"an unknown name stays unknown", "#if __A + 1 > 1\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else", "B_then"}},
		{"an #undef in an undecided branch", "#define M 1\n#if __U\n#undef M\n#endif\n#ifdef M\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else", "B_then"}},
		{"redefined after #undef", "#define N 1\n#undef N\n#define N 2\n#if N == 2\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_then"}},
		{"compiler macros are unknown", "#ifdef __x86_64__\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else", "B_then"}},
		{"__cplusplus is defined", "#ifndef __cplusplus\nB_c\n#else\nB_cpp\n#endif\n", nil, nil, []string{"B_cpp"}},
		{"logic and comparisons", "#define A\n#define B 3\n#if defined(A) && B >= 2 && !defined C && (B == 3 || D)\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_then"}},
		{"elif chain", "#if 0\nB_1\n#elif 1\nB_2\n#elif 1\nB_3\n#else\nB_4\n#endif\n", nil, nil, []string{"B_2"}},
		{"elif after undecided", "#if __A\nB_1\n#elif 0\nB_2\n#else\nB_3\n#endif\n", nil, nil, []string{"B_1", "B_2", "B_3"}},
		{"nested", "#if 1\n#if 0\nB_in\n#else\nB_out\n#endif\n#else\n#if 1\nB_dead\n#endif\n#endif\n", nil, nil, []string{"B_out"}},
		{"command-line define", "#if V == 2\nB_two\n#else\nB_other\n#endif\n", map[string]string{"V": "2"}, nil, []string{"B_two"}},
		{"macro a header redefines", "#define X 0\n#include \"h.h\"\n#if X\nB_then\n#else\nB_else\n#endif\n", nil, map[string]string{"h.h": "#undef X\n#define X 1\n"}, []string{"B_then"}},
		{"macro defined in an undecided branch", "#ifdef __A\n#define X 1\n#endif\n#if X\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else", "B_then"}},
		{"function-like macro in a condition", "#define F(x) x\n#if F(1)\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else", "B_then"}},
		{"continued condition", "#if \\\n  0\nB_then\n#else\nB_else\n#endif\n", nil, nil, []string{"B_else"}},
		{"directive in a comment", "/*\n#define X 1\n*/\n#if X\nB_then\n#endif\n", nil, nil, nil},
		{"include guard", "#include \"g.h\"\n#include \"g.h\"\n", nil, map[string]string{"g.h": "#ifndef G_H\n#define G_H\nB_once\n#endif\n"}, []string{"B_once"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, _ := branches(t, tt.src, tt.defines, tt.files)
			if !reflect.DeepEqual(live, tt.live) {
				t.Errorf("live branches %q, want %q", live, tt.live)
			}
		})
	}
}

// TestVetConditionLines: rewriting a condition keeps every line where it
// was, so positions after it are right.
func TestVetConditionLines(t *testing.T) {
	src := vetHeader + "#if defined(A) \\\n  || defined(B) /* a\n comment */\n#endif\nkernel void k() { asm(\"nop\"); }\n"
	got, err := vetSource(t, src, nil)
	if len(got) != 1 || got[0] != "7:19: inline assembly (asm) is not allowed in a Metal kernel" {
		t.Errorf("refusals %q (%v)", got, err)
	}
}

// genCondFile writes a random source of nested conditional groups,
// #define and #undef directives and marker lines B_n, for
// TestVetConditionsAgainstCompiler; n counts the markers.
func genCondFile(r *rand.Rand, b *strings.Builder, depth int, n *int) {
	names := []string{"M0", "M1", "M2", "M3"}
	name := func() string { return names[r.Intn(len(names))] }
	expr := func() string {
		var e func(d int) string
		e = func(d int) string {
			if d == 0 || r.Intn(3) == 0 {
				switch r.Intn(6) {
				case 0:
					return fmt.Sprint(r.Intn(4))
				case 1:
					return "defined(" + name() + ")"
				case 2:
					return "__METALAB_U" // unknown to the vetting pass; 0 or 1 for the compiler
				case 3:
					return "1u"
				}
				return name()
			}
			switch r.Intn(4) {
			case 0:
				return "!" + e(d-1)
			case 1:
				return "(" + e(d-1) + ")"
			}
			ops := []string{"&&", "||", "==", "!=", "<", ">", "+", "-", "*", "&", "|"}
			return e(d-1) + " " + ops[r.Intn(len(ops))] + " " + e(d-1)
		}
		return e(3)
	}
	for k := 1 + r.Intn(4); k > 0; k-- {
		switch c := r.Intn(7); {
		case c == 0:
			bodies := []string{"0", "1", "2", "-1", "0u", "M0 + 1", "(M1)", "", "M2 * 2"}
			fmt.Fprintf(b, "#define %s %s\n", name(), bodies[r.Intn(len(bodies))])
		case c == 1:
			fmt.Fprintf(b, "#undef %s\n", name())
		case c <= 3 && depth > 0:
			switch r.Intn(3) {
			case 0:
				fmt.Fprintf(b, "#ifdef %s\n", name())
			case 1:
				fmt.Fprintf(b, "#ifndef %s\n", name())
			default:
				fmt.Fprintf(b, "#if %s\n", expr())
			}
			genCondFile(r, b, depth-1, n)
			for e := r.Intn(3); e > 0; e-- {
				fmt.Fprintf(b, "#elif %s\n", expr())
				genCondFile(r, b, depth-1, n)
			}
			if r.Intn(2) == 0 {
				b.WriteString("#else\n")
				genCondFile(r, b, depth-1, n)
			}
			b.WriteString("#endif\n")
		default:
			fmt.Fprintf(b, "B_%d\n", *n)
			*n++
		}
	}
}

// TestVetConditionsAgainstCompiler holds the vetting pass's and msl's
// decisions of random conditional sources to the C++ compiler's
// preprocessor: every line the compiler keeps, both keep (a skipped
// branch is never one the compiler takes), and where the vetting pass
// decides, it decides as the compiler does.
func TestVetConditionsAgainstCompiler(t *testing.T) {
	cxx, err := testenv.CXX()
	if err != nil {
		testenv.Missing(t, "no C++ compiler to hold #if decisions to: "+err.Error())
		return
	}
	r := rand.New(rand.NewSource(20))
	files := 150
	if testing.Short() {
		files = 20
	}
	decided, total := 0, 0
	for i := 0; i < files; i++ {
		var b strings.Builder
		n := 0
		genCondFile(r, &b, 3, &n)
		src := b.String()
		// The unknown name is 0 for the compiler in half the files and 1
		// in the others: the vetting pass must keep both sides.
		cmd := testenv.Command(cxx, "-E", "-P", "-x", "c++", "-w", fmt.Sprintf("-D__METALAB_U=%d", i%2), "-")
		cmd.Stdin = strings.NewReader(src)
		out, err := cmd.Output()
		if err != nil {
			continue // a condition the compiler rejects (an empty #if)
		}
		kept := map[string]bool{}
		for _, w := range strings.Fields(string(out)) {
			kept[w] = true
		}
		live, _ := branches(t, src, nil, nil)
		vetLive := map[string]bool{}
		for _, w := range live {
			vetLive[w] = true
		}
		toks, _ := msl.Lex("k.metal", []byte(src))
		mslLive := map[string]bool{}
		for _, tk := range toks {
			if tk.Kind == msl.Ident {
				mslLive[tk.Text] = true
			}
		}
		for k := 0; k < n; k++ {
			m := fmt.Sprintf("B_%d", k)
			total++
			if kept[m] && !vetLive[m] {
				t.Errorf("file %d: the compiler keeps %s, the vetting pass skips it:\n%s", i, m, src)
			}
			if kept[m] && !mslLive[m] {
				t.Errorf("file %d: the compiler keeps %s, msl skips it:\n%s", i, m, src)
			}
			if !vetLive[m] {
				decided++
			}
		}
	}
	if total == 0 {
		t.Fatal("no generated source preprocessed")
	}
	t.Logf("%d of %d marker lines decided skipped by the vetting pass, none the compiler keeps", decided, total)
}
