package cuda

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"metalab/backend"
	"metalab/internal/testenv"
)

func TestKeyText(t *testing.T) {
	same := [][2]string{
		{"int a = 1;\nint b;\n", "#line 40 \"v2.metal\"\n  int a = 1;\n\n\n\tint b;\n"},
		{"f(x,\n  y);", "f(x, y);"},
		{"a  +  b", "a +\n\tb"},
		{"#pragma unroll\nfor(;;) {}\n", "#line 3 \"k.metal\"\n   #pragma unroll\n for(;;)   {}"},
		{"# 12 \"k.metal\"\nx;", "x;"},
		{"x = 1'000;   y", "x = 1'000; y"},
		{"#pragma unroll\n\n\n  for(;;) {}", "#pragma unroll\nfor(;;) {}"},
	}
	for _, tt := range same {
		if a, b := keyText([]byte(tt[0])), keyText([]byte(tt[1])); string(a) != string(b) {
			t.Errorf("keyText(%q) = %q, keyText(%q) = %q: want them equal", tt[0], a, tt[1], b)
		}
	}
	differ := [][2]string{
		{`s = "a  b";`, `s = "a b";`},
		{`s = R"x(a  b)x";`, `s = R"x(a b)x";`},
		{"c = ' ';", "c = '  ';"},
		{"a+b", "a + b"},
		{"a b", "ab"},
		{"#define F(x) x\n", "#define F (x) x\n"},
		{"#pragma unroll\nfor(;;) {}", "#pragma unroll for(;;) {}"},
		{"x; // a  b\ny;", "x; // a b\ny;"},
		{"int a = 1;", "int a = 2;"},
	}
	for _, tt := range append(same, differ...) {
		for _, x := range tt {
			if k := keyText([]byte(x)); string(keyText(k)) != string(k) {
				t.Errorf("keyText is not idempotent on %q: %q, then %q", x, k, keyText(k))
			}
		}
	}
	for _, tt := range differ {
		if a, b := keyText([]byte(tt[0])), keyText([]byte(tt[1])); string(a) == string(b) {
			t.Errorf("keyText(%q) = keyText(%q) = %q: want them different", tt[0], tt[1], a)
		}
	}
}

// fakeNVCC writes an nvcc that counts its kernel compiles in a file,
// sleeps a little (compiles of one key overlap) and writes an object
// naming its input; it returns the command and a function reading the
// count.
func fakeNVCC(t testing.TB) (string, func() int) {
	t.Helper()
	dir := t.TempDir()
	count := filepath.Join(dir, "runs")
	script := `#!/bin/sh
case "$1" in
--version) echo "Cuda compilation tools, release 12.4, V12.4.131"; exit 0;;
-dryrun) exit 0;;
esac
out=""; prev=""; last=""
for a in "$@"; do [ "$prev" = -o ] && out="$a"; prev="$a"; last="$a"; done
echo "$last" >> ` + count + `
sleep 0.2
echo "fake object of $last" > "$out"
`
	nvcc := filepath.Join(dir, "nvcc")
	if err := os.WriteFile(nvcc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return nvcc, func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "\n")
	}
}

// variantKernel is a Metal kernel as ablation variants write it: the same
// tokens under different comments, blank lines and indentation, or with a
// real change (k).
func variantKernel(comment string, indent string, k string) string {
	return comment + `#include <metal_stdlib>
using namespace metal;

kernel void scale(device float* a [[buffer(0)]],
` + indent + `uint i [[thread_position_in_grid]]) {
` + indent + `a[i] = a[i] * ` + k + `;
}
`
}

// TestBuildSharesTranslations: with a fake nvcc that counts its runs,
// variants whose Metal sources differ only in comments, blank lines and
// indentation, whose translations then differ only in #line directives
// and blanks, are one nvcc run; a real change is another; with line
// tables (racecheck) every translation is its own; compiles of one key
// running at once are one nvcc run.
func TestBuildSharesTranslations(t *testing.T) {
	testenv.RequireCXX(t)
	nvcc, runs := fakeNVCC(t)
	ctx := context.Background()
	b := New(Options{NVCC: nvcc, CacheDir: t.TempDir()})
	build := func(b *Backend, name, text string) string {
		t.Helper()
		so, err := b.Build(ctx, backend.Source{Name: name, Text: []byte(text), Entry: "scale"}, "sm_90")
		if err != nil {
			t.Fatalf("build %s: %v", name, err)
		}
		return so
	}
	base := build(b, "v0.metal", variantKernel("", "    ", "2.0f"))
	variants := []string{
		variantKernel("// ablation 1: nothing changed\n", "    ", "2.0f"),
		variantKernel("/* ablation 2\n   spans\n   lines */\n\n\n\n\n\n\n\n\n\n\n\n", "    ", "2.0f"),
		variantKernel("", "\t\t", "2.0f"),
		variantKernel("// 4\n", "  ", "2.0f"),
	}
	for i, v := range variants {
		if so := build(b, "v0.metal", v); so != base {
			t.Errorf("variant %d: object %s, want the shared %s", i+1, filepath.Base(so), filepath.Base(base))
		}
	}
	if n := runs(); n != 1 {
		t.Errorf("nvcc ran %d times for %d variants with one translation's tokens, want 1", n, len(variants)+1)
	}
	if so := build(b, "v0.metal", variantKernel("", "    ", "3.0f")); so == base {
		t.Error("a real change shares the object")
	}
	if n := runs(); n != 2 {
		t.Errorf("nvcc ran %d times after a real change, want 2", n)
	}

	// With line tables (racecheck's -lineinfo) each translation is its own.
	rc := New(Options{NVCC: nvcc, CacheDir: t.TempDir(), Racecheck: true})
	build(rc, "v0.metal", variantKernel("", "    ", "2.0f"))
	build(rc, "v0.metal", variantKernel("// moved\n", "    ", "2.0f"))
	if n := runs(); n != 4 {
		t.Errorf("nvcc ran %d times, want 4: with -lineinfo two variants whose lines differ are two runs", n)
	}

	// Compiles of one key at once: one nvcc run.
	var wg sync.WaitGroup
	objs := make([]string, 4)
	for i := range objs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			so, err := b.Build(ctx, backend.Source{Name: "v0.metal", Text: []byte(variantKernel(strings.Repeat("\n", i), "    ", "4.0f")), Entry: "scale"}, "sm_90")
			if err != nil {
				t.Error(err)
			}
			objs[i] = so
		}()
	}
	wg.Wait()
	if n := runs(); n != 5 {
		t.Errorf("nvcc ran %d times, want 5: four compiles of one key at once are one run", n)
	}
	for _, so := range objs[1:] {
		if so != objs[0] {
			t.Errorf("concurrent compiles of one key: objects %v", objs)
			break
		}
	}
}

// fakeCompileBackend is a Backend with a fake nvcc (counting its runs)
// and fake runners: Compile translates, "compiles" and loads without nvcc
// or a GPU.
func fakeCompileBackend(t *testing.T) (*Backend, func() int) {
	t.Helper()
	testenv.RequireCXX(t)
	nvcc, runs := fakeNVCC(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{NVCC: nvcc, CacheDir: t.TempDir()})
	if err := b.toolchain(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.runnerPath, b.arch = exe, "sm_90"
	b.testEnv = []string{"METALAB_FAKE_CUDA_RUNNER=1"}
	b.devOnce.Do(func() {}) // the device is the fake runner's
	t.Cleanup(func() { b.Close() })
	return b, runs
}

// TestCompileSharesObjects: through Compile, two variants that differ
// only in comments and blank lines are one nvcc run and one program (one
// runner: the same machine code), with one ObjectKey; a real change has
// another object, program and runner.
func TestCompileSharesObjects(t *testing.T) {
	b, runs := fakeCompileBackend(t)
	ctx := context.Background()
	compile := func(text string) *program {
		t.Helper()
		p, err := b.Compile(ctx, backend.Source{Name: "v.metal", Text: []byte(text), Entry: "scale"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return programOf(p)
	}
	p1 := compile(variantKernel("", "    ", "2.0f"))
	p2 := compile(variantKernel("// ablation: comment only\n\n\n", "  ", "2.0f"))
	p3 := compile(variantKernel("", "    ", "5.0f"))
	if n := runs(); n != 2 {
		t.Errorf("nvcc ran %d times for two variants of one translation and a real change, want 2", n)
	}
	if p1.ObjectKey() != p2.ObjectKey() || p1.ObjectKey() == p3.ObjectKey() {
		t.Errorf("object keys %s, %s, %s: want the first two equal, the third different", p1.ObjectKey(), p2.ObjectKey(), p3.ObjectKey())
	}
	if p1 != p2 {
		t.Error("two compiles of one object and kernel have a program each")
	}
	if a, c := runnerPid(t, p1), runnerPid(t, p3); a == c {
		t.Errorf("two variants with different objects ran in one runner process (%d)", a)
	}
}

// TestSharedProgramClose: a compile's Close releases its hold only: the
// program runs on for the other compile of its object, in the same
// runner, and the last Close stops it; a Close twice releases once.
func TestSharedProgramClose(t *testing.T) {
	b, _ := fakeCompileBackend(t)
	ctx := context.Background()
	compile := func(text string) backend.Program {
		t.Helper()
		p, err := b.Compile(ctx, backend.Source{Name: "v.metal", Text: []byte(text), Entry: "scale"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	h1 := compile(variantKernel("", "    ", "2.0f"))
	h2 := compile(variantKernel("// a comment\n", "    ", "2.0f"))
	h3 := compile(variantKernel("", "  ", "2.0f"))
	p := programOf(h1)
	pid := runnerPid(t, p)
	h1.Close()
	h1.Close()
	if p.Closed() {
		t.Fatal("the first of three holds closed the program")
	}
	if got := runnerPid(t, programOf(h2)); got != pid {
		t.Errorf("after one hold was released the program runs in runner %d, want %d", got, pid)
	}
	h2.Close()
	if p.Closed() {
		t.Fatal("a Close twice released two holds")
	}
	h3.Close()
	if !p.Closed() {
		t.Error("the last hold's Close left the program open")
	}
	// A compile after the last Close gets a new program.
	h4 := compile(variantKernel("", "    ", "2.0f"))
	defer h4.Close()
	if programOf(h4) == p {
		t.Error("a compile after every hold was released got the closed program")
	}
}

// TestKeyTextBundled: the translations of qsa_flash and of a variant with
// comments added at the top and in the middle differ (their #line
// directives and blank lines) but have one key text.
func TestKeyTextBundled(t *testing.T) {
	testenv.RequireCXX(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "kernels", "qsa_prompt.metal"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	mid := len(lines) / 2
	for mid < len(lines) && strings.TrimSpace(lines[mid]) != "" { // a blank line: between statements
		mid++
	}
	variant := "// ablation: a note\n// and another\n" + strings.Join(lines[:mid], "") + "\n// a comment in the middle\n\n" + strings.Join(lines[mid:], "")
	b := New(Options{})
	tr := func(text string) []byte {
		t.Helper()
		cu, err := b.translate(context.Background(), backend.Source{Name: "qsa_prompt.metal", Text: []byte(text), Entry: "qsa_flash",
			Constants: map[string]backend.Value{"COOP_K4": {Type: "bool", Bits: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return cu.CU
	}
	a, v := tr(string(src)), tr(variant)
	if string(a) == string(v) {
		t.Fatal("the variant's translation is the same text: the test does not test the key")
	}
	if string(keyText(a)) != string(keyText(v)) {
		t.Errorf("a variant with comments only has another key text")
	}
}
