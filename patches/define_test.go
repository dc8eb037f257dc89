package patches_test

import (
	"errors"
	"strings"
	"testing"

	"metalab/internal/edit"
	"metalab/patches"
)

func TestDefineEdit(t *testing.T) {
	tests := []struct {
		name, src, macro, value string
		want                    string // the source after the edit
		guarded                 bool
		line                    int
	}{
		{"plain", "#define NSG 4\nkernel void k() {}\n", "NSG", "8",
			"#define NSG 8\nkernel void k() {}\n", false, 1},
		{"ifndef default", "// head\n#ifndef NSG\n#define NSG 4\n#endif\n", "NSG", "2",
			"// head\n#ifndef NSG\n#define NSG 2\n#endif\n", true, 3},
		{"if !defined", "#if !defined(NSG)\n  #  define NSG 4 // simdgroups\n#endif\n", "NSG", "16",
			"#if !defined(NSG)\n  #  define NSG 16 // simdgroups\n#endif\n", true, 2},
		{"if !defined without parens", "#if !defined NSG\n#define NSG 4\n#endif\n", "NSG", "16",
			"#if !defined NSG\n#define NSG 16\n#endif\n", true, 2},
		{"else of ifdef", "#ifdef NSG\n#else\n#define NSG 4\n#endif\n", "NSG", "8",
			"#ifdef NSG\n#else\n#define NSG 8\n#endif\n", true, 3},
		{"ifndef with a comment", "#ifndef NSG // default\n#define NSG 4\n#endif\n", "NSG", "8",
			"#ifndef NSG // default\n#define NSG 8\n#endif\n", true, 2},
		{"nested in another group", "#if __METAL_VERSION__ >= 300\n#ifndef NSG\n#define NSG 4\n#endif\n#endif\n", "NSG", "8",
			"#if __METAL_VERSION__ >= 300\n#ifndef NSG\n#define NSG 8\n#endif\n#endif\n", true, 3},
		{"else of ifndef", "#ifndef NSG\nint a;\n#else\n#define NSG 4\n#endif\n", "NSG", "8",
			"#ifndef NSG\nint a;\n#else\n#define NSG 8\n#endif\n", false, 4},
		{"guard that reads another macro", "#if !defined(NSG) || defined(WIDE)\n#define NSG 4\n#endif\n", "NSG", "8",
			"#if !defined(NSG) || defined(WIDE)\n#define NSG 8\n#endif\n", false, 2},
		{"ifndef of another macro", "#ifndef OTHER\n#define NSG 4\n#endif\n", "NSG", "8",
			"#ifndef OTHER\n#define NSG 8\n#endif\n", false, 2},
		{"suffix kept", "#define K_TILE 128u\n", "K_TILE", "64", "#define K_TILE 64u\n", false, 1},
		{"long suffix and parens kept", "#define K (128UL) /* bytes */\n", "K", "256", "#define K (256UL) /* bytes */\n", false, 1},
		{"hex replaced", "#define K 0x80\n", "K", "64", "#define K 64\n", false, 1},
		{"negative into a suffixed literal", "#define K 4u\n", "K", "-1", "#define K -1\n", false, 1},
		{"expression replaced whole", "#define TPG (NSG * 32)  // threads\n", "TPG", "128", "#define TPG 128  // threads\n", false, 1},
		{"empty value", "#define FLAG\nx\n", "FLAG", "1", "#define FLAG 1\nx\n", false, 1},
		{"continuation", "#define V \\\n  4 \\\n\nint x;\n", "V", "5", "#define V \\\n  5 \\\n\nint x;\n", false, 1},
		{"disabled copy beside the live one", "#if 0\n#define NSG 1\n#endif\n#define NSG 4\n", "NSG", "8",
			"#if 0\n#define NSG 1\n#endif\n#define NSG 8\n", false, 4},
		{"in a comment only once", "// #define NSG 2\n/* #define NSG 3 */\n#define NSG 4\n", "NSG", "8",
			"// #define NSG 2\n/* #define NSG 3 */\n#define NSG 8\n", false, 3},
		{"prefix name not matched", "#define NSGX 1\n#define NSG 4\n", "NSG", "8", "#define NSGX 1\n#define NSG 8\n", false, 2},
		{"crlf", "#ifndef N\r\n#define N 4\r\n#endif\r\n", "N", "8", "#ifndef N\r\n#define N 8\r\n#endif\r\n", true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := patches.FindDefine([]byte(tt.src), tt.macro)
			if err != nil {
				t.Fatal(err)
			}
			if d.Guarded != tt.guarded || d.Line != tt.line {
				t.Errorf("Guarded %v, Line %d, want %v, %d", d.Guarded, d.Line, tt.guarded, tt.line)
			}
			if got := tt.src[d.Pos:d.End]; !strings.HasPrefix(strings.TrimLeft(got, " "), "#") {
				t.Errorf("directive bytes %q", got)
			}
			e, err := patches.DefineEdit([]byte(tt.src), tt.macro, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			out, err := edit.Apply([]byte(tt.src), []edit.Edit{e})
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("after %v:\n%q\nwant\n%q", e, out, tt.want)
			}
			// The edit is minimal: it lies inside the directive.
			if e.Start < d.Pos || e.End > d.End {
				t.Errorf("edit %v outside the directive [%d,%d)", e, d.Pos, d.End)
			}
			// Setting the old value back is the identity.
			back := d.Edit(d.Value)
			if out, _ := edit.Apply([]byte(tt.src), []edit.Edit{back}); string(out) != tt.src && d.Value != "" {
				t.Errorf("setting the value %q back changed the source: %q", d.Value, out)
			}
		})
	}
}

func TestDefineRefusals(t *testing.T) {
	tests := []struct {
		name, src, macro string
		want             string
		none             bool // the error wraps ErrNoDefine
	}{
		{"absent", "kernel void k() {}\n", "NSG", "no #define of the macro NSG in the source", true},
		{"only in #if 0", "#if 0\n#define NSG 4\n#endif\n", "NSG", "its #define (line 2) is in a branch the preprocessor skips", true},
		{"only in a nested #if 0", "#ifdef A\n#if 0\nint x;\n  # define NSG 4\n#endif\n#endif\n", "NSG", "its #define (line 4) is in a branch", true},
		{"only in #else of #if 1", "#if 1\n#define M 1\n#else\n#define NSG 4\n#endif\n", "NSG", "(line 4) is in a branch the preprocessor skips", true},
		{"only in a comment", "// #define NSG 4\n", "NSG", "no #define of the macro NSG", true},
		{"undecidable branches", "#ifdef WIDE\n#define NSG 8\n#else\n#define NSG 4\n#endif\n", "NSG", "NSG is defined 2 times (lines 2, 4)", false},
		{"redefined", "#define NSG 4\n#undef NSG\n#define NSG 8\n", "NSG", "NSG is defined 2 times (lines 1, 3)", false},
		{"function-like", "#define NSG(x) (x)\n", "NSG", "#define NSG (line 1): a function-like macro", false},
		{"bad name", "#define NSG 4\n", "N SG", "not a macro name", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := patches.DefineEdit([]byte(tt.src), tt.macro, "2")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if got := errors.Is(err, patches.ErrNoDefine); got != tt.none {
				t.Errorf("errors.Is(err, ErrNoDefine) = %v, want %v", got, tt.none)
			}
		})
	}
}

// TestFindDefineWith checks that host defines decide which branches are
// skipped, and that a host define of the macro itself leaves its default
// in place.
func TestFindDefineWith(t *testing.T) {
	const src = "#ifndef NSG\n#define NSG 2\n#endif\n#if NSG == 8\n#define W 1\n#endif\n"
	for _, tt := range []struct {
		name, macro string
		defines     map[string]string
		want        string // "" when found
	}{
		{"file default skips the branch", "W", nil, "(line 5) is in a branch the preprocessor skips"},
		{"host value opens it", "W", map[string]string{"NSG": "8"}, ""},
		{"host value keeps it shut", "W", map[string]string{"NSG": "4"}, "(line 5) is in a branch"},
		{"host define of the macro itself", "NSG", map[string]string{"NSG": "8", "X": "1"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := patches.FindDefineWith([]byte(src), tt.macro, tt.defines)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, patches.ErrNoDefine) {
					t.Fatalf("got %v, %v, want %q", d, err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != tt.macro || d.Value == "" || (tt.macro == "NSG") != d.Guarded {
				t.Errorf("got %+v", d)
			}
		})
	}
}

// FuzzDefineEdit checks on any source that FindDefine does not panic,
// that the edit of a found #define lies inside its value's directive,
// that setting the old value back is the identity, and that the edited
// source's #define of the macro holds the new value.
func FuzzDefineEdit(f *testing.F) {
	for _, s := range []string{
		"#define N 4\n",
		"#ifndef N\n#define N 4u\n#endif\n",
		"#if 0\n#define N 1\n#endif\n#define N (2)\n",
		"#define N \\\n 4 // c\n",
		"#define N\n",
		"#define N \"x\" /* y */\n",
		"/* #define N 3 */ #define N 3\n",
		"#define N(x) x\n",
		"#ifdef N\n#else\n#define N 0x10UL\n#endif",
		"#define N!",     // no blank before the value: the edit must add one
		"#define N\\\n!", // nor only a splice
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		d, err := patches.FindDefine([]byte(src), "N")
		if err != nil {
			return
		}
		if !(d.Pos <= d.ValueStart && d.ValueStart <= d.ValueEnd && d.ValueEnd <= d.End && d.End <= len(src)) {
			t.Fatalf("ranges out of order: %+v in %d bytes", d, len(src))
		}
		if src[d.ValueStart:d.ValueEnd] != d.Value {
			t.Fatalf("Value %q is not its bytes %q", d.Value, src[d.ValueStart:d.ValueEnd])
		}
		if d.Value != "" {
			back, err := edit.Apply([]byte(src), []edit.Edit{d.Edit(d.Value)})
			if err != nil || string(back) != src {
				t.Fatalf("setting %q back: %q, %v", d.Value, back, err)
			}
		}
		out, err := edit.Apply([]byte(src), []edit.Edit{d.Edit("7")})
		if err != nil {
			t.Fatal(err)
		}
		d2, err := patches.FindDefine(out, "N")
		if err != nil {
			t.Fatalf("after the edit: %v\n%q", err, out)
		}
		if !strings.Contains(d2.Value, "7") || d2.Line != d.Line {
			t.Fatalf("after the edit the value is %q at line %d, want 7 at line %d\n%q", d2.Value, d2.Line, d.Line, out)
		}
	})
}
