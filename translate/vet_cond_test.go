package translate

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"metalab/backend"
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
