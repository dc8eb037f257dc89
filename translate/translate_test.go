package translate_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/internal/testenv"
	"metalab/msl"
	"metalab/translate"
	"metalab/translate/cpp"
)

// translateSrc translates src for the C++ target with the compiler's
// preprocessor.
func translateSrc(t *testing.T, src backend.Source) (*translate.Unit, error) {
	t.Helper()
	pp := &translate.Preprocessor{CXX: testenv.RequireCXX(t)}
	return translate.Translate(context.Background(), src, translate.Options{Target: cpp.Target, Preprocessor: pp})
}

// The cpu backend's prelude and runtime header, found before any test
// changes directory.
var (
	prelude, _ = filepath.Abs("../backend/cpu/prelude")
	runtime, _ = filepath.Abs("../backend/cpu/runtime")
)

// syntaxCheck compiles a translation unit with -fsyntax-only against the
// cpu backend's prelude.
func syntaxCheck(t *testing.T, tu []byte) ([]byte, error) {
	t.Helper()
	cxx := testenv.RequireCXX(t)
	if _, err := os.Stat(filepath.Join(prelude, "metal_stdlib")); err != nil {
		t.Fatalf("prelude not present: %v", err)
	}
	cmd := testenv.Command(cxx, "-std=c++17", "-fsyntax-only", "-ffp-contract=off", "-I", prelude, "-I", runtime, "-x", "c++", "-")
	cmd.Stdin = bytes.NewReader(tu)
	return cmd.CombinedOutput()
}

const header = "#include <metal_stdlib>\nusing namespace metal;\n"

// TestSlots checks the layout of the entry's threadgroup storage: the
// kernel's first, then the helpers' in the order msl reaches them.
func TestSlots(t *testing.T) {
	src := header + `
void h2(threadgroup float* p) { threadgroup uint c[3]; p[0] = c[0]; }
void h1() { threadgroup float a[5]; h2(a); }
void unused() { threadgroup float z[100]; }
kernel void k(device float* o [[buffer(0)]]) { threadgroup half s[16]; h1(); o[0] = s[0]; }
kernel void other(device float* o [[buffer(0)]]) { h2(nullptr); }
`
	u, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k"})
	if err != nil {
		t.Fatal(err)
	}
	want := []translate.Slot{{0, "k", "s", "half[16]"}, {1, "h1", "a", "float[5]"}, {2, "h2", "c", "uint[3]"}}
	if fmt.Sprint(u.Slots) != fmt.Sprint(want) {
		t.Errorf("Slots = %v, want %v", u.Slots, want)
	}
	if got := strings.Join(u.Entries, ","); got != "k,other" {
		t.Errorf("Entries = %s, want k,other", got)
	}
	if bytes.Contains(u.Text, []byte("unused")) || bytes.Contains(u.Text, []byte("other")) {
		t.Errorf("the translation keeps functions the entry does not reach:\n%s", u.Text)
	}
}

// TestConditionalKernels checks that the defines decide which definition
// of a kernel is translated, as the compiler decides it: an undefined name
// is 0.
func TestConditionalKernels(t *testing.T) {
	src := header + "#if VARIANT == 1\nkernel void k(device float* o [[buffer(0)]]) { threadgroup float a[8]; o[0] = a[0]; }\n#else\nkernel void k(device float* o [[buffer(0)]]) { threadgroup half b[32]; o[0] = b[0]; }\n#endif\n"
	tests := []struct {
		defines map[string]string
		want    string
	}{
		{map[string]string{"VARIANT": "1"}, "[{0 k a float[8]}]"},
		{map[string]string{"VARIANT": "2"}, "[{0 k b half[32]}]"},
		{nil, "[{0 k b half[32]}]"},
	}
	for _, tt := range tests {
		u, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k", Defines: tt.defines})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(u.Slots); got != tt.want {
			t.Errorf("defines %v: slots %s, want %s", tt.defines, got, tt.want)
		}
	}
}

// mapLines follows the #line directives of out and returns, for each
// identifier at_NAME in it, the file and line the compiler would report.
func mapLines(out string) map[string]string {
	got := map[string]string{}
	file, line := "", 0
	sc := bufio.NewScanner(strings.NewReader(out))
	marker := regexp.MustCompile(`\bat_(\w+)`)
	lineDir := regexp.MustCompile(`^#line (\d+) "([^"]*)"`)
	for sc.Scan() {
		text := sc.Text()
		if m := lineDir.FindStringSubmatch(text); m != nil {
			n, _ := strconv.Atoi(m[1])
			file, line = m[2], n
			continue
		}
		for _, m := range marker.FindAllStringSubmatch(text, -1) {
			got[m[1]] = file + ":" + strconv.Itoa(line)
		}
		line++
	}
	return got
}

// writeTree writes files (path: content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// chdir makes dir the working directory for the rest of the test.
func chdir(t *testing.T, dir string) {
	t.Helper()
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(old) })
}

// TestLineDirectives checks that every line of the translation maps to
// the .metal line it came from, in the kernel and in headers (named by
// their path through the include directory as it was given), across
// generated lines, macro expansions and skipped code.
func TestLineDirectives(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"kernels/k.metal": header + "#include \"util.h\"\n#include \"util.h\"\n" +
			"#define TWICE(x) \\\n  twice(x)\n" + // 5-6
			"void helper() {\n  threadgroup float t[4]; int at_m8 = 0;\n  t[0] = 1;\n}\n" + // 7-10
			"kernel void k(device float* o [[buffer(0)]],\n  uint i [[thread_position_in_grid]]) { int at_m12 = 0;\n" + // 11-12
			"  threadgroup float s[\n  4]; int at_m14 = 0;\n  s[0] = TWICE(o[i]); helper(); int at_m15 = 0;\n" + // 13-15
			"#if 0\n  nothing;\n#endif\n  o[i] = s[0]; int at_m19 = 0;\n}\n", // 16-20
		"lib/util.h": "#pragma once\n\ninline float twice(float x) { int at_h3 = 0;\n\n\n\n\n\n\n\n\n\n  return 2 * x; int at_h13 = 0;\n}\n",
	})
	chdir(t, dir)
	text, err := os.ReadFile("kernels/k.metal")
	if err != nil {
		t.Fatal(err)
	}
	u, err := translateSrc(t, backend.Source{Name: "kernels/k.metal", Text: text, Entry: "k", Dir: "kernels", IncludeDirs: []string{"lib"}})
	if err != nil {
		t.Fatal(err)
	}
	got := mapLines(string(u.Text))
	want := map[string]string{
		"h3": "lib/util.h:3", "h13": "lib/util.h:13",
		"m8": "kernels/k.metal:8", "m12": "kernels/k.metal:12", "m14": "kernels/k.metal:14",
		"m15": "kernels/k.metal:15", "m19": "kernels/k.metal:19",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("at_%s maps to %q, want %q", k, got[k], w)
		}
	}
	if n := strings.Count(string(u.Text), "twice(float x)"); n != 1 {
		t.Errorf("#pragma once header written %d times, want 1", n)
	}
	if out, err := syntaxCheck(t, u.Text); err != nil {
		t.Errorf("the translation does not compile: %v\n%s\n%s", err, out, u.Text)
	}
}

// TestCompilerErrorsPointAtSource checks that the compiler reports an
// error in a kernel, in a header and in a threadgroup declaration's
// generated alias at the .metal file and line.
func TestCompilerErrorsPointAtSource(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"k.metal":     header + "#include \"ops.h\"\nvoid h() {\n  threadgroup float t[4];\n  t[0] = 1;\n}\nkernel void k(device float* o [[buffer(0)]]) {\n  threadgroup float s[4];\n  h();\n  o[0] = s[0] + undefined_name + op(1);\n}\n",
		"inc/ops.h":   "#pragma once\n// ops\ninline float op(float x) {\n  return x + also_undefined;\n}\n",
		"alias.metal": header + "kernel void k(device float* o [[buffer(0)]]) {\n  threadgroup float s[no_such_size];\n  o[0] = s[0];\n}\n",
	})
	chdir(t, dir)
	tests := []struct {
		file, want string
	}{
		{"k.metal", `k\.metal:11:\d+: error: .undefined_name.`},
		{"k.metal", `inc/ops\.h:4:\d+: error: .also_undefined.`},
		{"alias.metal", `alias\.metal:4:\d+: error: .no_such_size.`},
	}
	for _, tt := range tests {
		text, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		u, err := translateSrc(t, backend.Source{Name: tt.file, Text: text, Entry: "k", Dir: ".", IncludeDirs: []string{"inc"}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := syntaxCheck(t, u.Text)
		if err == nil {
			t.Fatalf("%s compiled:\n%s", tt.file, u.Text)
		}
		if !regexp.MustCompile(tt.want).Match(out) {
			t.Errorf("compiler output does not match %s:\n%s", tt.want, out)
		}
	}
}

// TestPreprocessErrors checks what the preprocessor rejects: errors name
// the .metal file; a compiler that cannot run is the machine's fault.
func TestPreprocessErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"inc/bad.h": "#pragma once\n\n#error bad header\n"})
	tests := []struct {
		name, src string
		want      string
	}{
		{"error directive", "#include <metal_stdlib>\n#ifndef N\n#error N is not set\n#endif\n", `^k\.metal:3:2: error: #error N is not set`},
		{"error in header", "#include \"bad.h\"\n", `inc/bad\.h:3:2: error: #error bad header`},
		{"unknown metal header", "#include <metal_no_such_header>\n", `^k\.metal:1:10: fatal error: metal_no_such_header: No such file`},
	}
	chdir(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(tt.src), Entry: "k", Dir: ".", IncludeDirs: []string{"inc"}})
			var pe *translate.PreprocessError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want a *PreprocessError", err, err)
			}
			if !regexp.MustCompile(tt.want).MatchString(pe.Error()) {
				t.Errorf("error %q does not match %s\n%s", pe.Error(), tt.want, pe.Log)
			}
		})
	}
	pp := &translate.Preprocessor{CXX: []string{"metalab-no-such-compiler"}}
	_, err := pp.Preprocess(context.Background(), backend.Source{Name: "k.metal", Text: []byte(header)}, nil)
	var env *backend.EnvError
	if !errors.As(err, &env) {
		t.Errorf("a missing compiler gives %v (%T), want a *backend.EnvError", err, err)
	}
}

// TestPreprocessKept checks that a Preprocessor keeps its results by
// everything that decides them: the same source and headers give the
// same result without running the compiler; another define or a changed
// header runs it again.
func TestPreprocessKept(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"h.h": "#define V 1\n"})
	pp := &translate.Preprocessor{CXX: testenv.RequireCXX(t)}
	src := backend.Source{Name: "k.metal", Text: []byte("#include \"h.h\"\nint v = V;\n"), Dir: dir}
	inc := func(content string) []translate.IncludedFile {
		return []translate.IncludedFile{{Name: "h.h", Path: filepath.Join(dir, "h.h"), Content: []byte(content)}}
	}
	a, err := pp.Preprocess(context.Background(), src, inc("#define V 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pp.Preprocess(context.Background(), src, inc("#define V 1\n"))
	if a != b {
		t.Errorf("the same source and headers were preprocessed twice")
	}
	writeTree(t, dir, map[string]string{"h.h": "#define V 2\n"})
	c, _ := pp.Preprocess(context.Background(), src, inc("#define V 2\n"))
	if c == a || !bytes.Contains(c.Text, []byte("int v = 2;")) {
		t.Errorf("a changed header did not preprocess again:\n%s", c.Text)
	}
	src.Defines = map[string]string{"W": "1"}
	if d, _ := pp.Preprocess(context.Background(), src, inc("#define V 2\n")); d == c {
		t.Errorf("another define gave the kept result")
	}
}

// TestCompiles checks that the first entry of every conformance kernel
// translates and compiles.
func TestCompiles(t *testing.T) {
	files, _ := filepath.Glob("../backend/cpu/conformance/testdata/*.metal")
	if len(files) == 0 {
		t.Fatal("no conformance kernels to compile")
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pf, _ := msl.Parse(name, text)
			eps := pf.EntryPoints()
			if len(eps) == 0 {
				t.Fatal("no entry points")
			}
			u, err := translateSrc(t, backend.Source{Name: name, Text: text, Entry: eps[0].Name, Dir: filepath.Dir(f)})
			if err != nil {
				t.Fatal(err)
			}
			if out, err := syntaxCheck(t, u.Text); err != nil {
				t.Errorf("g++: %v\n%s", err, out)
			}
		})
	}
}

// conformance returns the conformance kernels' sources.
func conformance(t testing.TB) map[string][]byte {
	files, _ := filepath.Glob("../backend/cpu/conformance/testdata/*.metal")
	if len(files) == 0 {
		t.Fatal("no conformance kernels")
	}
	out := map[string][]byte{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = text
	}
	return out
}

// TestNoPanicOnTruncatedInput translates every prefix (in steps) of the
// conformance kernels and of mangled copies, taken as preprocessed: bad
// input must give errors, never a panic.
func TestNoPanicOnTruncatedInput(t *testing.T) {
	try := func(name string, text []byte) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("TranslatePreprocessed panicked on %s (%d bytes): %v\n%s", name, len(text), r, text)
			}
		}()
		_, err := translate.TranslatePreprocessed(translate.PreprocessedAsIs(name, text), backend.Source{Name: name, Text: text, Entry: "k"}, cpp.Target)
		if err != nil && strings.Contains(err.Error(), "translation failed") {
			t.Fatalf("%s (%d bytes): %v", name, len(text), err)
		}
	}
	for name, text := range conformance(t) {
		for cut := 0; cut <= len(text); cut += 7 {
			try(name, text[:cut])
			if cut < len(text) {
				try(name, append(append([]byte{}, text[:cut]...), text[cut+1:]...))
			}
		}
	}
}

// FuzzTranslate checks that no input makes the translation panic.
func FuzzTranslate(f *testing.F) {
	for _, text := range conformance(f) {
		f.Add(text, "k")
	}
	f.Fuzz(func(t *testing.T, text []byte, entry string) {
		_, err := translate.TranslatePreprocessed(translate.PreprocessedAsIs("f.metal", text), backend.Source{Name: "f.metal", Text: text, Entry: entry}, cpp.Target)
		if err != nil && strings.Contains(err.Error(), "translation failed") {
			t.Fatal(err)
		}
	})
}

// TestUndeclaredCallsElsewhere checks that a call of a function nobody
// declares refuses the source only when the translation keeps it: another
// kernel may use a function the prelude lacks.
func TestUndeclaredCallsElsewhere(t *testing.T) {
	src := header + "kernel void other(device float* o [[buffer(0)]]) {\n  o[0] = not_in_the_prelude(o[1]);\n}\n" +
		"kernel void k(device float* o [[buffer(0)]]) { o[0] = 1; }\n" +
		"kernel void calls(device float* o [[buffer(0)]]) { o[0] = also_missing(2); }\n"
	if _, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k"}); err != nil {
		t.Errorf("k: %v", err)
	}
	_, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(src), Entry: "calls"})
	var r *translate.Refusal
	if !errors.As(err, &r) || len(r.Errors) != 1 || !strings.Contains(r.Error(), "k.metal:7:") || !strings.Contains(r.Error(), "also_missing") {
		t.Errorf("calls: %v, want the refusal of also_missing alone", err)
	}
	// Anything else the vetting pass refuses stops every entry.
	src += "kernel void bad() { asm(\"nop\"); }\n"
	if _, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k"}); !errors.As(err, &r) {
		t.Errorf("k with asm elsewhere: %v, want a refusal", err)
	}
}
