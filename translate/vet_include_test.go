package translate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/internal/testenv"
	"metalab/msl"
)

// closureNames returns the diagnostic names of the files of a closure.
func closureNames(files []IncludedFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, filepath.ToSlash(f.Name))
	}
	return out
}

func TestIncludeClosure(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		files map[string]string // under the kernel's directory; "inc/..." under an include directory
		want  []string
	}{
		{"none", vetHeader + "kernel void k() {}\n", nil, nil},
		{"subdirectories", "#include \"a.h\"\n#include \"sub/b.h\"\n",
			map[string]string{"a.h": "", "sub/b.h": "#include \"c.h\"\n#include \"../a.h\"\n", "sub/c.h": "#include \"deeper/d.h\"\n", "sub/deeper/d.h": "", "unused.h": ""},
			[]string{"a.h", "sub/b.h", "sub/c.h", "sub/deeper/d.h"}},
		{"include directory", "#include \"lib.h\"\n", map[string]string{"inc/lib.h": "#include \"lib2.h\"\n", "inc/lib2.h": ""}, []string{"lib.h", "lib2.h"}},
		{"kernel directory first", "#include \"lib.h\"\n", map[string]string{"lib.h": "// mine\n", "inc/lib.h": "// theirs\n"}, []string{"lib.h"}},
		{"pragma once cycle", "#include \"a.h\"\n", map[string]string{"a.h": "#pragma once\n#include \"b.h\"\n", "b.h": "#pragma once\n#include \"a.h\"\n"}, []string{"a.h", "b.h"}},
		{"include guard cycle", "#include \"a.h\"\n#include \"b.h\"\n",
			map[string]string{"a.h": "#ifndef A_H\n#define A_H\n#include \"b.h\"\n#endif\n", "b.h": "#if !defined(B_H)\n#define B_H\n#include \"a.h\"\n#endif\n"}, []string{"a.h", "b.h"}},
		{"inactive branch", "#define USE_B 0\n#if USE_B\n#include \"b.h\"\n#else\n#include \"a.h\"\n#endif\n#ifdef NEVER_DEFINED\n#include \"missing.h\"\n#endif\n",
			map[string]string{"a.h": "", "b.h": ""}, []string{"a.h"}},
		{"undefined macro", "#ifdef SOME_HOST_FLAG\n#include \"a.h\"\n#else\n#include \"b.h\"\n#endif\n", map[string]string{"a.h": "", "b.h": ""}, []string{"b.h"}},
		{"macro from an include decides", "#include \"config.h\"\n#if USE_FAST\n#include \"fast.h\"\n#else\n#include \"slow.h\"\n#endif\n",
			map[string]string{"config.h": "#define USE_FAST 1\n", "fast.h": "", "slow.h": ""}, []string{"config.h", "fast.h"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, inc := t.TempDir(), t.TempDir()
			for name, body := range tt.files {
				if rest, ok := strings.CutPrefix(name, "inc/"); ok {
					writeFiles(t, inc, map[string]string{rest: body})
				} else {
					writeFiles(t, dir, map[string]string{name: body})
				}
			}
			files, err := IncludeClosure(backend.Source{Name: "k.metal", Text: []byte(tt.src), Dir: dir}, []string{inc})
			if err != nil {
				t.Fatal(err)
			}
			if got := closureNames(files); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("closure %q, want %q", got, tt.want)
			}
			for _, f := range files {
				b, err := os.ReadFile(f.Path)
				if err != nil || string(b) != string(f.Content) {
					t.Errorf("%s: content %q, file holds %q (%v)", f.Name, f.Content, b, err)
				}
			}
		})
	}
}

func TestIncludeClosureErrors(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		files map[string]string
		dir   bool
		want  string // regexp for the error
	}{
		{"missing", "\n  #include \"missing.h\"\n", nil, true, `^k\.metal:2:3: include "missing.h": file not found$`},
		{"missing in an include", "#include \"a.h\"\n", map[string]string{"a.h": "// a\n#include \"nope.h\"\n"}, true, `^a\.h:2:1: include "nope.h": file not found$`},
		{"no include directory", "#include \"x.h\"\n", nil, false, `^k\.metal:1:1: include "x.h": no include directory given$`},
		{"escaping", "#include \"../../../../../../../../../../etc/hostname\"\n", nil, true, `^k\.metal:1:1: #include "\.\./.*hostname": the (path leaves|file lies outside)`},
		{"absolute", "#include \"/etc/hostname\"\n", nil, true, `^k\.metal:1:1: #include "/etc/hostname": absolute include paths are not allowed$`},
		{"nested too deeply", "#include \"a.h\"\n", map[string]string{"a.h": "#include \"a.h\"\n"}, true, `^a\.h:1:1: includes nested too deeply$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := ""
			if tt.dir {
				dir = t.TempDir()
				writeFiles(t, dir, tt.files)
			}
			_, err := IncludeClosure(backend.Source{Name: "k.metal", Text: []byte(tt.src), Dir: dir}, nil)
			if err == nil || !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("error %v, want match for %s", err, tt.want)
			}
			// Vet reports the same problem, and a missing file is not a refusal.
			verr := Vet(backend.Source{Name: "k.metal", Text: []byte(tt.src), Dir: dir}, nil)
			if verr == nil || verr.Error() != err.Error() {
				t.Errorf("Vet: %v, IncludeClosure: %v", verr, err)
			}
			var r *Refusal
			wantRefusal := tt.name == "escaping" || tt.name == "absolute"
			if errors.As(verr, &r) != wantRefusal {
				t.Errorf("Vet error %T, want a *Refusal: %v", verr, wantRefusal)
			}
		})
	}
}

// TestIncludeSymlinkEscape: a symlink inside the kernel's directory that
// points outside it is refused, whether it names a file or a directory.
func TestIncludeSymlinkEscape(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.h": "secret\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.h"), filepath.Join(dir, "link.h")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"inside.h": "// fine\n"})
	if err := os.Symlink(filepath.Join(dir, "inside.h"), filepath.Join(dir, "alias.h")); err != nil {
		t.Fatal(err)
	}
	for _, inc := range []string{"link.h", "linkdir/secret.h"} {
		got, err := vetSource2(t, dir, "#include \""+inc+"\"\n")
		if len(got) != 1 || !strings.Contains(got[0], "lies outside the kernel's directory") {
			t.Errorf("#include %q: %q (%v), want a refusal", inc, got, err)
		}
	}
	if got, err := vetSource2(t, dir, "#include \"alias.h\"\n"); err != nil {
		t.Errorf("a symlink inside the directory refused: %q (%v)", got, err)
	}
}

func vetSource2(t *testing.T, dir, text string) ([]string, error) {
	t.Helper()
	err := Vet(backend.Source{Name: "k.metal", Text: []byte(text), Dir: dir}, nil)
	return refusals(err), err
}

// TestVetIncludeDirs: an include directory is searched after the kernel's
// directory, files in it are vetted, and paths may not leave it.
func TestVetIncludeDirs(t *testing.T) {
	dir, inc := t.TempDir(), t.TempDir()
	writeFiles(t, inc, map[string]string{"lib/ok.h": "inline float ok(float x) { return x; }\n", "lib/bad.h": "inline void bad() {\n  __builtin_trap();\n}\n"})
	src := func(text string) backend.Source {
		return backend.Source{Name: "k.metal", Text: []byte(vetHeader + text), Dir: dir}
	}
	if err := Vet(src("#include \"lib/ok.h\"\nkernel void k(device float* o [[buffer(0)]]) { o[0] = ok(1); }\n"), []string{inc}); err != nil {
		t.Errorf("include from an include directory: %v", err)
	}
	err := Vet(src("#include \"lib/bad.h\"\n"), []string{inc})
	if got := refusals(err); len(got) != 1 || got[0] != "lib/bad.h:2:3: the compiler builtin __builtin_trap is not allowed in a Metal kernel" {
		t.Errorf("refusal in an include directory's file: %q (%v)", got, err)
	}
	// A header including another by its path from the include directory
	// (MLX's "mlx/backend/metal/kernels/bf16.h" from utils.h beside it) is
	// named by that path, not by its includer's directory joined to it.
	writeFiles(t, inc, map[string]string{"lib/deep/x.h": "#include \"lib/deep/y.h\"\n", "lib/deep/y.h": "inline void bad2() {\n  __builtin_trap();\n}\n"})
	err = Vet(src("#include \"lib/deep/x.h\"\n"), []string{inc})
	if got := refusals(err); len(got) != 1 || !strings.HasPrefix(got[0], "lib/deep/y.h:2:3: ") {
		t.Errorf("refusal in a header included by its include-directory path: %q (%v)", got, err)
	}
	if err := Vet(src("#include \"lib/ok.h\"\n"), nil); err == nil || !strings.Contains(err.Error(), "file not found") {
		t.Errorf("without the include directory: %v, want file not found", err)
	}
	err = Vet(src("#include \"lib/../../x.h\"\n"), []string{inc})
	if got := refusals(err); len(got) != 1 || !strings.Contains(got[0], "leaves the kernel's directory and the include directories") {
		t.Errorf("escaping an include directory: %q (%v)", got, err)
	}
}

// TestVetNotLexable: a source that does not lex is not vetted; the error is
// msl's, positioned, and not a refusal.
func TestVetNotLexable(t *testing.T) {
	err := Vet(backend.Source{Name: "k.metal", Text: []byte("kernel void k() { \"open\n}\n")}, nil)
	var l msl.ErrorList
	if !errors.As(err, &l) || !strings.HasPrefix(err.Error(), "k.metal:1:19: unterminated string literal") {
		t.Errorf("Vet = %v (%T), want msl's lex error", err, err)
	}
}

// TestIncludeSymlinkDotDot: "a/../passwd" is resolved as the compiler
// resolves it, a component at a time, so with a symlink a pointing outside
// the kernel's directory the ".." leaves through it: the include names the
// file beside a's target, not the harmless passwd beside a, and is
// refused. Where the symlink stays inside, the file approved is the one the
// preprocessor reads.
func TestIncludeSymlinkDotDot(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"ssl/certs.h": "", "passwd": "root:x:0:0:secret\n"})
	writeFiles(t, dir, map[string]string{"passwd": "// harmless\n", "real/sub/x.h": "", "real/inner.h": "#define INNER 1\n", "inner.h": "#define OUTER 1\n"})
	if err := os.Symlink(filepath.Join(outside, "ssl"), filepath.Join(dir, "a")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if err := os.Symlink(filepath.Join(dir, "real", "sub"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	got, err := vetSource2(t, dir, "#include \"a/../passwd\"\n")
	if len(got) != 1 || got[0] != `1:1: #include "a/../passwd": the file lies outside the kernel's directory and the include directories` {
		t.Errorf("#include \"a/../passwd\" through a symlink leaving the directory: %q (%v), want a refusal", got, err)
	}
	if _, err := IncludeClosure(backend.Source{Name: "k.metal", Text: []byte("#include \"a/../passwd\"\n"), Dir: dir}, nil); err == nil {
		t.Error("IncludeClosure approved a/../passwd")
	}
	// b -> real/sub: b/../inner.h is real/inner.h, not the inner.h beside b.
	src := backend.Source{Name: "k.metal", Text: []byte("#include \"b/../inner.h\"\n"), Dir: dir}
	files, err := IncludeClosure(src, nil)
	if err != nil || len(files) != 1 || string(files[0].Content) != "#define INNER 1\n" {
		t.Fatalf("b/../inner.h: %v %+v, want real/inner.h", err, files)
	}
	if err := Vet(src, nil); err != nil {
		t.Errorf("b/../inner.h refused: %v", err)
	}
	// A path that names no file through the symlink is missing, as for
	// the compiler, though cleaned as text it would name ./passwd.
	if _, err := IncludeClosure(backend.Source{Name: "k.metal", Text: []byte("#include \"nodir/../passwd\"\n"), Dir: dir}, nil); err == nil || !strings.Contains(err.Error(), "file not found") {
		t.Errorf("nodir/../passwd: %v, want file not found", err)
	}
	cxx := testenv.RequireCXX(t)
	pp := &Preprocessor{CXX: cxx}
	_, err = pp.Preprocess(context.Background(), backend.Source{Name: "k.metal", Text: []byte("#include \"b/../inner.h\"\n#ifndef INNER\n#error the compiler read another file than vetting approved\n#endif\n"), Dir: dir}, nil)
	if err != nil {
		t.Errorf("the preprocessor read another inner.h than vetting: %v", err)
	}
}

// TestPreprocessWithholdsOutsideFiles: a message the compiler gives about a
// file outside the include roots names the file and position but never
// its text or source excerpt.
func TestPreprocessWithholdsOutsideFiles(t *testing.T) {
	cxx := testenv.RequireCXX(t)
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"ssl/x": "", "passwd": "#secretword line of the host file\n"})
	if err := os.Symlink(filepath.Join(outside, "ssl"), filepath.Join(dir, "a")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	writeFiles(t, dir, map[string]string{"passwd": "// harmless\n", "bad.h": "#bogusdirective inside\n"})
	pp := &Preprocessor{CXX: cxx}
	// Preprocess runs what it is given: vetting is what refuses this
	// include, and the message is kept clean even without it.
	_, err := pp.Preprocess(context.Background(), backend.Source{Name: "k.metal", Text: []byte("#include \"a/../passwd\"\n"), Dir: dir}, nil)
	var pe *PreprocessError
	if !errors.As(err, &pe) {
		t.Fatalf("preprocess: %v, want a *PreprocessError", err)
	}
	if strings.Contains(pe.Log, "secretword") || !strings.Contains(pe.Log, "message withheld") {
		t.Errorf("the log shows the outside file:\n%s", pe.Log)
	}
	// A file inside the roots keeps its message and excerpt.
	_, err = pp.Preprocess(context.Background(), backend.Source{Name: "k.metal", Text: []byte("#include \"bad.h\"\n"), Dir: dir}, nil)
	if !errors.As(err, &pe) || !strings.Contains(pe.Log, "bogusdirective") || strings.Contains(pe.Log, "withheld") {
		t.Errorf("a message about a file inside the roots: %v\n%v", err, pe)
	}
}
