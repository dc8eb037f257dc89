package metal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"metalab/backend"
)

// writeFiles writes files under a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var (
	lineDirective = regexp.MustCompile(`^#line (\d+) "((?:[^"\\]|\\.)*)"$`)
	marker        = regexp.MustCompile(`@([\w./]+):(\d+)`)
)

// attribute follows out's #line directives as a C preprocessor does and
// returns, for every line carrying a marker "@file:line", the position the
// compiler would report for it. Lines before any #line belong to main.
func attribute(t *testing.T, main, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	file, line := main, 1
	for _, text := range strings.Split(out, "\n") {
		if m := lineDirective.FindStringSubmatch(text); m != nil {
			n, _ := strconv.Atoi(m[1])
			file, line = strings.ReplaceAll(m[2], `\"`, `"`), n
			continue
		}
		if m := marker.FindStringSubmatch(text); m != nil {
			if prev, dup := got[m[0]]; dup {
				got[m[0]] = prev + "," + fmt.Sprintf("%s:%d", file, line)
			} else {
				got[m[0]] = fmt.Sprintf("%s:%d", file, line)
			}
		}
		line++
	}
	return got
}

func TestLibrarySourceIncludes(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"k.metal": `#include <metal_stdlib>
// @k.metal:2
#include "common.h"
#include "sub/deep.h" // a comment after the name
int a; // @k.metal:5
#if defined(NEVER)
#include "common.h"
#endif
#include "missing.h"
#include"common.h"
int b; // @k.metal:11
/* #include "common.h" in a comment stays put
   @k.metal:13 */
int c; // @k.metal:14`,
		"common.h": `#pragma once
int common; // @common.h:2`,
		"sub/deep.h": `// @sub/deep.h:1
#include "../plain.h"
int deep; // @sub/deep.h:3
`,
		"plain.h": "int plain; // @plain.h:1\n",
	})
	src := backend.Source{Name: "k.metal", Dir: dir, Text: mustRead(t, filepath.Join(dir, "k.metal"))}
	out, err := librarySource(src)
	if err != nil {
		t.Fatal(err)
	}
	got := attribute(t, "k.metal", out)
	want := map[string]string{
		"@k.metal:2": "k.metal:2", "@k.metal:5": "k.metal:5", "@k.metal:11": "k.metal:11",
		"@k.metal:13": "k.metal:13", "@k.metal:14": "k.metal:14",
		// common.h is inlined three times (lines 3, 7 and 10): its guard keeps
		// #pragma once's meaning whichever #if branch comes first.
		"@common.h:2":   "common.h:2,common.h:2,common.h:2",
		"@sub/deep.h:1": "sub/deep.h:1", "@sub/deep.h:3": "sub/deep.h:3",
		"@plain.h:1": "plain.h:1",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s reported at %q, want %q", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected marker %s in output", k)
		}
	}
	if strings.Contains(out, "#pragma once") {
		t.Error("#pragma once left in an inlined header (Metal warns about it in the main file)")
	}
	if n := strings.Count(out, "#ifndef METALAB_PRAGMA_ONCE_"); n != 3 {
		t.Errorf("%d include guards, want 3 (one per inclusion of common.h)", n)
	}
	for _, keep := range []string{`#include "missing.h"`, "#include <metal_stdlib>", `/* #include "common.h" in a comment`} {
		if !strings.Contains(out, keep) {
			t.Errorf("output lost %q", keep)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLibrarySourceUnchanged(t *testing.T) {
	text := "#include \"x.h\"\nkernel void k() {}\n"
	for _, src := range []backend.Source{
		{Name: "k.metal", Text: []byte(text)},                   // no Dir: includes are Metal's business
		{Name: "k.metal", Text: []byte(text), Dir: t.TempDir()}, // x.h does not exist
	} {
		out, err := librarySource(src)
		if err != nil || out != text {
			t.Errorf("librarySource(Dir %q) = %q, %v; want the text unchanged", src.Dir, out, err)
		}
	}
}

func TestLibrarySourceErrors(t *testing.T) {
	loop := writeFiles(t, map[string]string{"a.h": "#include \"b.h\"\n", "b.h": "#include \"a.h\"\n"})
	tests := []struct {
		name string
		src  backend.Source
		want string
	}{
		{"include cycle", backend.Source{Name: "k.metal", Dir: loop, Text: []byte("\n#include \"a.h\"\n")}, "b.h:1: #include \"a.h\": includes nested more than 32 deep"},
		{"NUL byte", backend.Source{Name: "k.metal", Text: []byte("kernel\x00")}, "k.metal: the source contains a NUL byte (offset 6)"},
		{"invalid UTF-8", backend.Source{Name: "k.metal", Text: []byte("// \xff\n")}, "k.metal: the source is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := librarySource(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("librarySource: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCompileFailure(t *testing.T) {
	tests := []struct {
		name, log, wantMsg, wantLog string
	}{
		{"compiler log",
			"Compilation failed: \n\nprogram_source:3:5: warning: unused variable 'x'\nprogram_source:12:9: error: use of undeclared identifier 'y'\n    y = 1;\n    ^\n",
			"kernels/k.metal:12:9: error: use of undeclared identifier 'y'",
			"Compilation failed: \n\nkernels/k.metal:3:5: warning: unused variable 'x'\nkernels/k.metal:12:9: error: use of undeclared identifier 'y'\n    y = 1;\n    ^\n"},
		{"include with #line", "common.h:2:1: fatal error: unknown type name 'intt'\n", "common.h:2:1: fatal error: unknown type name 'intt'", "common.h:2:1: fatal error: unknown type name 'intt'\n"},
		{"no error line", "\nCompiler encountered an internal error\n", "Compiler encountered an internal error", "\nCompiler encountered an internal error\n"},
		{"empty", "", "kernels/k.metal: the Metal compiler failed without a message", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compileFailure("kernels/k.metal", tt.log)
			if f.Kind != backend.CompileError || f.Msg != tt.wantMsg || f.Log != tt.wantLog {
				t.Errorf("compileFailure = %+v\nwant Msg %q Log %q", f, tt.wantMsg, tt.wantLog)
			}
			var bf *backend.Failure
			if !errors.As(error(f), &bf) {
				t.Error("not a *backend.Failure")
			}
		})
	}
}

func TestCompileFailureUnnamed(t *testing.T) {
	if f := compileFailure("", "program_source:1:1: error: x\n"); f.Msg != "program_source:1:1: error: x" {
		t.Errorf("unnamed source: Msg %q, want Metal's own name kept", f.Msg)
	}
}

func TestConstantBytes(t *testing.T) {
	tests := []struct {
		v        backend.Value
		wantType uint
		want     []byte
		wantErr  bool
	}{
		{backend.Value{Type: "uint", Bits: 7}, 33, []byte{7, 0, 0, 0}, false},
		{backend.Value{Type: "int", Bits: 0xfffffffe}, 29, []byte{0xfe, 0xff, 0xff, 0xff}, false},
		{backend.Value{Type: "int32_t", Bits: 1}, 29, []byte{1, 0, 0, 0}, false},
		{backend.Value{Type: "float", Bits: 0x40400000}, 3, []byte{0, 0, 0x40, 0x40}, false},
		{backend.Value{Type: "half", Bits: 0x3c00}, 16, []byte{0, 0x3c}, false},
		{backend.Value{Type: "bool", Bits: 0x02}, 53, []byte{1}, false},
		{backend.Value{Type: "bool", Bits: 0x100}, 53, []byte{0}, false},
		{backend.Value{Type: "ushort", Bits: 0xbeef}, 41, []byte{0xef, 0xbe}, false},
		{backend.Value{Type: "ulong", Bits: 0x0102030405060708}, 85, []byte{8, 7, 6, 5, 4, 3, 2, 1}, false},
		{backend.Value{Type: "uchar", Bits: 0x1ff}, 49, []byte{0xff}, false},
		{backend.Value{Type: "float4", Bits: 0}, 0, nil, true},
	}
	for _, tt := range tests {
		code, b, err := constantBytes(tt.v)
		if (err != nil) != tt.wantErr || code != tt.wantType || string(b) != string(tt.want) {
			t.Errorf("constantBytes(%+v) = %d, %x, %v; want %d, %x, error %v", tt.v, code, b, err, tt.wantType, tt.want, tt.wantErr)
		}
	}
	if got := dataTypeName(33); got != "uint" {
		t.Errorf("dataTypeName(33) = %q, want uint", got)
	}
	if got := dataTypeName(6); got != "MTLDataType 6" {
		t.Errorf("dataTypeName(6) = %q", got)
	}
	if macroValue("") != "1" || macroValue("0") != "0" {
		t.Error("macroValue: an empty define must be 1, others kept")
	}
}

// TestLibrarySourceIncludeDirs: headers are found as the cpu backend finds
// them, beside the including file, then in Dir, then in each IncludeDir
// (a spec's includes:), and named in diagnostics by the directory as given.
func TestLibrarySourceIncludeDirs(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"kernels/k.metal":         "#include \"ggml_common.h\"\n#include \"both.h\"\n#include \"nested/a.h\"\nint k; // @k.metal:4\n",
		"kernels/both.h":          "int both_kernel_dir; // @kernels/both.h:1\n",
		"include/both.h":          "int both_include_dir; // @include/both.h:1\n",
		"include/ggml_common.h":   "#pragma once\nint common; // @include/ggml_common.h:2\n",
		"include/nested/a.h":      "#include \"b.h\"\nint a; // @include/nested/a.h:2\n",
		"include/nested/b.h":      "int b; // @include/nested/b.h:1\n",
		"second/unused/nothing.h": "",
	})
	inc := filepath.Join(root, "include")
	src := backend.Source{Name: "k.metal", Dir: filepath.Join(root, "kernels"), IncludeDirs: []string{filepath.Join(root, "second"), inc},
		Text: mustRead(t, filepath.Join(root, "kernels", "k.metal"))}
	out, err := librarySource(src)
	if err != nil {
		t.Fatal(err)
	}
	got := attribute(t, "k.metal", out)
	want := map[string]string{
		"@k.metal:4":               "k.metal:4",
		"@include/ggml_common.h:2": filepath.ToSlash(filepath.Join(inc, "ggml_common.h")) + ":2",
		"@kernels/both.h:1":        "both.h:1", // the kernel's directory comes first
		"@include/nested/a.h:2":    filepath.ToSlash(filepath.Join(inc, "nested/a.h")) + ":2",
		"@include/nested/b.h:1":    filepath.ToSlash(filepath.Join(inc, "nested/b.h")) + ":1", // beside the including header
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s reported at %q, want %q", k, got[k], w)
		}
	}
	if strings.Contains(out, "both_include_dir") || strings.Contains(out, "#include \"") {
		t.Errorf("output:\n%s\nwant every include inlined, both.h from the kernel's directory", out)
	}
	// IncludeDirs alone (no Dir) are searched too.
	src.Dir = ""
	src.Text = []byte("#include \"ggml_common.h\"\n")
	if out, err := librarySource(src); err != nil || !strings.Contains(out, "int common;") {
		t.Errorf("IncludeDirs without Dir: %v\n%s", err, out)
	}
}

// TestLibrarySourceRefusesHostFiles: as on the cpu backend, headers come
// only from Dir and IncludeDirs.
func TestLibrarySourceRefusesHostFiles(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"outside.h":       "int secret;\n",
		"kernels/ok.h":    "#include \"../outside.h\"\n",
		"kernels/sub/s.h": "#include \"../ok2.h\"\n",
		"kernels/ok2.h":   "int fine;\n",
	})
	kdir := filepath.Join(root, "kernels")
	if err := os.Symlink(filepath.Join(root, "outside.h"), filepath.Join(kdir, "link.h")); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(root, "outside.h")
	tests := []struct {
		name, text, want string
	}{
		{"absolute", "\n#include \"" + abs + "\"\n", "k.metal:2: #include \"" + abs + "\": absolute include paths are not allowed"},
		{"escape", "#include \"../outside.h\"\n", "k.metal:1: #include \"../outside.h\": the file lies outside"},
		{"escape from a header", "#include \"ok.h\"\n", "ok.h:1: #include \"../outside.h\": the file lies outside"},
		{"missing escape", "#include \"../../nowhere.h\"\n", "the path leaves the kernel's directory"},
		{"symbolic link out", "#include \"link.h\"\n", "k.metal:1: #include \"link.h\": the file lies outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prepareSource(backend.Source{Name: "k.metal", Dir: kdir, Text: []byte(tt.text)})
			var f *backend.Failure
			if !errors.As(err, &f) || f.Kind != backend.Refused || !strings.Contains(f.Msg, tt.want) {
				t.Errorf("prepareSource: %v, want a Refused failure containing %q", err, tt.want)
			}
		})
	}
	// ../ that stays inside the kernel's directory is fine.
	if out, err := librarySource(backend.Source{Name: "k.metal", Dir: kdir, Text: []byte("#include \"sub/s.h\"\n")}); err != nil || !strings.Contains(out, "int fine;") {
		t.Errorf("a ../ inside the kernel's directory: %v\n%s", err, out)
	}
}
