package patches_test

import (
	"bytes"
	"context"
	"fmt"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"metalab/msl"
	"metalab/patches"
	"metalab/patches/patchtest"
)

// applyPatch applies a single-file unified diff to base with the
// independent applier of patchtest.
func applyPatch(t *testing.T, patch string, base string) string {
	t.Helper()
	got, err := patchtest.Apply(patch, []byte(base))
	if err != nil {
		t.Fatalf("%v:\n%s", err, patch)
	}
	return string(got)
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

var unifiedTests = []struct {
	name       string
	base, vari string
	wantHunks  int
	wantInDiff []string
}{
	{name: "middle", base: numbered(10), vari: strings.Replace(numbered(10), "line 5\n", "LINE 5\n", 1), wantHunks: 1, wantInDiff: []string{"@@ -2,7 +2,7 @@\n", "-line 5\n+LINE 5\n"}},
	{name: "first_line", base: numbered(5), vari: "zero\n" + numbered(5)[len("line 1\n"):], wantHunks: 1, wantInDiff: []string{"@@ -1,4 +1,4 @@\n"}},
	{name: "last_line", base: numbered(5), vari: numbered(4) + "five\n", wantHunks: 1, wantInDiff: []string{"@@ -2,4 +2,4 @@\n"}},
	{name: "insert_at_top", base: numbered(5), vari: "#pragma x\n" + numbered(5), wantHunks: 1, wantInDiff: []string{"@@ -1,3 +1,4 @@\n+#pragma x\n line 1\n"}},
	{name: "append", base: numbered(5), vari: numbered(6), wantHunks: 1, wantInDiff: []string{"@@ -3,3 +3,4 @@\n"}},
	{name: "delete_all", base: numbered(3), vari: "", wantHunks: 1, wantInDiff: []string{"@@ -1,3 +0,0 @@\n"}},
	{name: "empty_base", base: "", vari: numbered(2), wantHunks: 1, wantInDiff: []string{"@@ -0,0 +1,2 @@\n"}},
	{name: "no_newline_base", base: "a\nb\nc", vari: "a\nb\nc\n", wantHunks: 1, wantInDiff: []string{"-c\n\\ No newline at end of file\n+c\n"}},
	{name: "no_newline_variant", base: "a\nb\nc\n", vari: "a\nb\nc", wantHunks: 1, wantInDiff: []string{"-c\n+c\n\\ No newline at end of file\n"}},
	{name: "no_newline_both_changed", base: "a\nb\nc", vari: "a\nb\nd", wantHunks: 1, wantInDiff: []string{"-c\n\\ No newline at end of file\n+d\n\\ No newline at end of file\n"}},
	{name: "no_newline_context", base: "a\nb\nc\nd\ne", vari: "a\nB\nc\nd\ne", wantHunks: 1, wantInDiff: []string{" e\n\\ No newline at end of file\n"}},
	{name: "no_newline_removed_last", base: "a\nb\nc", vari: "a\nb\n", wantHunks: 1, wantInDiff: []string{"-c\n\\ No newline at end of file\n"}},
	{name: "crlf", base: "a\r\nb\r\nc\r\n", vari: "a\r\n  #pragma x\r\nb\r\nc\r\n", wantHunks: 1, wantInDiff: []string{"+  #pragma x\r\n"}},
	{name: "adjacent_merge_gap6", base: numbered(20), vari: strings.Replace(strings.Replace(numbered(20), "line 5\n", "X\n", 1), "line 12\n", "Y\n", 1), wantHunks: 1},
	{name: "separate_gap7", base: numbered(20), vari: strings.Replace(strings.Replace(numbered(20), "line 5\n", "X\n", 1), "line 13\n", "Y\n", 1), wantHunks: 2},
	{name: "tabs", base: "k {\n\tfor (;;) {}\n}\n", vari: "k {\n\t#pragma clang loop unroll(full)\n\tfor (;;) {}\n}\n", wantHunks: 1},
}

func TestUnified(t *testing.T) {
	for _, tt := range unifiedTests {
		t.Run(tt.name, func(t *testing.T) {
			const path = "kernels/k.metal"
			got, err := patches.Unified(path, []byte(tt.base), []byte(tt.vari))
			if err != nil {
				t.Fatalf("Unified: %v", err)
			}
			if !strings.HasPrefix(got, "diff --git a/kernels/k.metal b/kernels/k.metal\n--- a/kernels/k.metal\n+++ b/kernels/k.metal\n@@ ") {
				t.Errorf("bad header:\n%s", got)
			}
			if n := strings.Count(got, "\n@@ "); n != tt.wantHunks {
				t.Errorf("got %d hunks, want %d:\n%s", n, tt.wantHunks, got)
			}
			for _, w := range tt.wantInDiff {
				if !strings.Contains(got, w) {
					t.Errorf("diff lacks %q:\n%s", w, got)
				}
			}
			if res := applyPatch(t, got, tt.base); res != tt.vari {
				t.Errorf("applied patch gives %q, want %q", res, tt.vari)
			}
			if err := patches.Verify(context.Background(), got, path, []byte(tt.base), []byte(tt.vari), ""); err != nil {
				t.Errorf("Verify: %v", err)
			}
			// git apply itself must produce exactly the variant.
			dir := gitRepo(t, path, tt.base)
			run(t, dir, got, "git", "apply", "-")
			res, err := os.ReadFile(filepath.Join(dir, path))
			if err != nil {
				t.Fatal(err)
			}
			if string(res) != tt.vari {
				t.Errorf("git apply gives %q, want %q", res, tt.vari)
			}
		})
	}
}

func TestUnifiedEqual(t *testing.T) {
	got, err := patches.Unified("k.metal", []byte("a\n"), []byte("a\n"))
	if err != nil || got != "" {
		t.Fatalf("Unified(equal) = %q, %v; want \"\", nil", got, err)
	}
}

func gitRepo(t *testing.T, path, content string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "", "git", "init", "-q")
	full := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t *testing.T, dir, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

func TestVerifyRepo(t *testing.T) {
	const path = "metal/k.metal"
	base := numbered(8)
	vari := strings.Replace(base, "line 4\n", "LINE 4\n", 1)
	patch, err := patches.Unified(path, []byte(base), []byte(vari))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Run("ok", func(t *testing.T) {
		dir := gitRepo(t, path, base)
		if err := patches.Verify(ctx, patch, path, []byte(base), []byte(vari), dir); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	})
	t.Run("stale", func(t *testing.T) {
		dir := gitRepo(t, path, base+"moved\n")
		err := patches.Verify(ctx, patch, path, []byte(base), []byte(vari), dir)
		if err == nil || !strings.Contains(err.Error(), "stale baseline: metal/k.metal has sha256 ") {
			t.Fatalf("Verify error = %v, want stale baseline", err)
		}
	})
	t.Run("subdir_skips", func(t *testing.T) {
		dir := gitRepo(t, "sub/"+path, base)
		err := patches.Verify(ctx, patch, path, []byte(base), []byte(vari), filepath.Join(dir, "sub"))
		if err == nil {
			t.Fatal("Verify in a repository subdirectory succeeded, want an error")
		}
	})
	t.Run("does_not_apply", func(t *testing.T) {
		other := strings.Replace(base, "line 3\n", "three\n", 1)
		err := patches.Verify(ctx, patch, path, []byte(other), []byte(vari), "")
		if err == nil || !strings.Contains(err.Error(), "git apply") {
			t.Fatalf("Verify error = %v, want git apply failure", err)
		}
	})
	// A patch that applies but does not give the variant (a printing bug)
	// is refused, with and without a repository.
	t.Run("wrong_result", func(t *testing.T) {
		wrong := []byte(vari + "extra\n")
		err := patches.Verify(ctx, patch, path, []byte(base), wrong, "")
		if err == nil || !strings.Contains(err.Error(), "not the variant's") {
			t.Fatalf("Verify error = %v, want a result mismatch", err)
		}
		dir := gitRepo(t, path, base)
		err = patches.Verify(ctx, patch, path, []byte(base), wrong, dir)
		if err == nil || !strings.Contains(err.Error(), "not the variant's") {
			t.Fatalf("Verify in a repository: error = %v, want a result mismatch", err)
		}
	})
	t.Run("bad_path", func(t *testing.T) {
		if err := patches.Verify(ctx, patch, "../x.metal", []byte(base), []byte(vari), ""); err == nil {
			t.Fatal("Verify accepted a path outside the repository")
		}
	})
}

// fakeFile builds an msl.File with the given functions, without the parser.
func fakeFile(src string, fns ...*msl.Func) *msl.File {
	fset := token.NewFileSet()
	tf := fset.AddFile("k.metal", -1, len(src))
	tf.SetLinesForContent([]byte(src))
	return &msl.File{Name: "k.metal", Src: []byte(src), Funcs: fns, TokFile: tf}
}

func TestCheckFuncScope(t *testing.T) {
	src := "#define N 4\n" + // 0..12
		"void helper() {\n  x = 1;\n}\n" +
		"kernel void k() {\n  for (;;) {}\n  y = 2;\n}\n" +
		"// tail\n"
	hp := strings.Index(src, "void helper")
	he := strings.Index(src, "}\nkernel") + 1
	kp := strings.Index(src, "kernel void")
	ke := strings.Index(src, "}\n// tail") + 1
	f := fakeFile(src,
		&msl.Func{Name: "helper", Pos: hp, End: he, Body: &msl.Block{}},
		&msl.Func{Name: "k", Kind: msl.Kernel, Pos: kp, End: ke, Body: &msl.Block{}},
	)
	tests := []struct {
		name    string
		vari    string
		fns     []string
		wantErr string
	}{
		{"inside_insert", strings.Replace(src, "  for", "  #pragma unroll\n  for", 1), []string{"k"}, ""},
		{"inside_change", strings.Replace(src, "y = 2", "y = 3", 1), []string{"k"}, ""},
		{"other_fn", strings.Replace(src, "x = 1", "x = 2", 1), []string{"k"}, "k.metal:3: change outside k"},
		{"other_fn_allowed", strings.Replace(src, "x = 1", "x = 2", 1), []string{"k", "helper"}, ""},
		{"define", strings.Replace(src, "N 4", "N 8", 1), []string{"k"}, "k.metal:1: change outside k"},
		{"before_fn", strings.Replace(src, "kernel void", "// hi\nkernel void", 1), []string{"k"}, "k.metal:5: change outside k"},
		{"after_fn", strings.Replace(src, "// tail", "// tail2", 1), []string{"k"}, "k.metal:9: change outside k"},
		{"unknown_fn", src + "x", []string{"nope"}, `no function "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := patches.CheckFuncScope([]byte(src), []byte(tt.vari), f, tt.fns)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckFuncScope: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckFuncScope error = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

// mutateLines makes a random line-based edit of s driven by seed: lines
// are deleted, inserted or changed, and the final newline may be toggled.
func mutateLines(s string, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed>>7|1))
	lines := patchtest.SplitLines(s)
	var out []string
	for _, l := range lines {
		switch r.IntN(8) {
		case 0:
			continue
		case 1:
			out = append(out, fmt.Sprintf("new %d\n", r.IntN(5)))
			out = append(out, l)
		case 2:
			out = append(out, "changed "+l)
		default:
			out = append(out, l)
		}
	}
	if r.IntN(4) == 0 {
		out = append(out, "tail\n")
	}
	res := strings.Join(out, "")
	if r.IntN(3) == 0 {
		res = strings.TrimSuffix(res, "\n")
	}
	return res
}

func FuzzRoundTrip(f *testing.F) {
	for _, tt := range unifiedTests {
		f.Add(tt.base, uint64(len(tt.vari)))
	}
	f.Add("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n", uint64(7))
	f.Fuzz(func(t *testing.T, a string, seed uint64) {
		b := mutateLines(a, seed)
		patch, err := patches.Unified("k.metal", []byte(a), []byte(b))
		if err != nil {
			t.Fatalf("Unified: %v", err)
		}
		if a == b {
			if patch != "" {
				t.Fatalf("Unified(equal) = %q", patch)
			}
			return
		}
		if got := applyPatch(t, patch, a); got != b {
			t.Fatalf("round trip of %q -> %q gives %q; patch:\n%s", a, b, got, patch)
		}
		if !bytes.HasPrefix([]byte(patch), []byte("diff --git ")) {
			t.Fatalf("bad patch header: %q", patch)
		}
	})
}
