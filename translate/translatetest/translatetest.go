// Package translatetest runs golden tests of a translation target: each
// txtar archive in a directory holds a kernel source (the first .metal
// file), any headers it includes, a header of settings and, in a section
// per target (want.cpp, want.cu), the translation unit each target must
// make of it: the targets share their inputs.
//
// The archive's comment is a description followed by settings, one per
// line:
//
//	entry: NAME               the entry point (required)
//	define: NAME=VALUE        a preprocessor define (repeatable)
//	constant: NAME TYPE BITS  a function-constant value, BITS in hex
//	includes: DIR             an include directory, relative to the archive (repeatable)
//	error: REGEXP             the translation fails with an error matching REGEXP
//	error want.cpp: REGEXP    the same, for the target whose section is want.cpp
//
// The want section (named by the target: want.cpp, want.cu) holds the
// translation unit; the archive's files are extracted into a temporary
// directory whose path is written as $WORK in it. Run the tests with
// -update to rewrite the want sections, and review the diff like code.
package translatetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"metalab/backend"
	"metalab/internal/testenv"
	"metalab/translate"
)

var update = flag.Bool("update", false, "rewrite the want sections of the golden archives")

// A Case is one archive, extracted.
type Case struct {
	Name   string
	Source backend.Source
	Dir    string // where the archive was extracted
	Unit   *translate.Unit
}

// Run translates the source of every archive in dir for target and
// compares the translation unit with the archive's section want
// ("want.cpp"); check, if not nil, is then called with each successful
// translation (to compile it, say). Translation needs the C++ compiler's
// preprocessor: without one the tests skip, or fail under CI
// (testenv.RequireCXX).
func Run(t *testing.T, dir string, target translate.Target, want string, check func(t *testing.T, c *Case)) {
	t.Helper()
	cxx := testenv.RequireCXX(t)
	pp := &translate.Preprocessor{CXX: cxx}
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden archives in %s", dir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			c := &Case{Name: filepath.Base(file), Dir: work}
			src := &c.Source
			var wantRe *regexp.Regexp
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				key, val, ok := strings.Cut(line, ":")
				if !ok {
					continue
				}
				val = strings.TrimSpace(val)
				switch strings.TrimSpace(key) {
				case "entry":
					src.Entry = val
				case "define":
					if src.Defines == nil {
						src.Defines = map[string]string{}
					}
					k, v, _ := strings.Cut(val, "=")
					src.Defines[k] = v
				case "constant":
					f := strings.Fields(val)
					if len(f) != 3 {
						t.Fatalf("constant %q: want NAME TYPE BITS", val)
					}
					bits, err := strconv.ParseUint(f[2], 16, 64)
					if err != nil {
						t.Fatalf("constant %q: %v", val, err)
					}
					if src.Constants == nil {
						src.Constants = map[string]backend.Value{}
					}
					src.Constants[f[0]] = backend.Value{Type: f[1], Bits: bits}
				case "includes":
					src.IncludeDirs = append(src.IncludeDirs, filepath.Join(work, val))
				case "error", "error " + want:
					wantRe = regexp.MustCompile(val)
				}
			}
			wantAt := -1
			for i, f := range ar.Files {
				if f.Name == want {
					wantAt = i
				}
				if strings.HasPrefix(f.Name, "want.") {
					continue
				}
				p := filepath.Join(work, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				if src.Name == "" && strings.HasSuffix(f.Name, ".metal") {
					src.Name, src.Text, src.Dir = f.Name, f.Data, work
				}
			}
			if src.Name == "" || src.Entry == "" {
				t.Fatalf("%s: no .metal file or no entry: setting", file)
			}
			u, err := translate.Translate(context.Background(), *src, translate.Options{Target: target, Preprocessor: pp})
			var got string
			if err != nil {
				got = "error: " + err.Error() + "\n"
				if wantRe == nil {
					t.Errorf("Translate: %v", err)
				} else if !wantRe.MatchString(err.Error()) {
					t.Errorf("Translate: %v\nwant an error matching %s", err, wantRe)
				}
			} else {
				if wantRe != nil {
					t.Errorf("Translate succeeded, want an error matching %s", wantRe)
				}
				got = strings.ReplaceAll(string(u.Text), work+string(filepath.Separator), "$WORK/")
				got = strings.ReplaceAll(got, work, "$WORK")
				c.Unit = u
			}
			if *update {
				if err := rewrite(file, want, got); err != nil {
					t.Fatal(err)
				}
			} else if wantAt < 0 {
				t.Errorf("%s has no %s section (run with -update)", file, want)
			} else if w := string(ar.Files[wantAt].Data); w != got {
				t.Errorf("translation differs from %s in %s:\n%s", want, file, diff(w, got))
			}
			if check != nil && c.Unit != nil {
				check(t, c)
			}
		})
	}
}

// rewrite sets section want of the archive file to got. The targets'
// packages share the archives and `go test ./translate/... -update` runs
// them at once, so the archive is read again and written under a lock:
// each rewrites its own section of the current file.
func rewrite(file, want, got string) error {
	unlock, err := lock(file + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return err
	}
	at := -1
	for i, f := range ar.Files {
		if f.Name == want {
			at = i
		}
	}
	if at < 0 {
		ar.Files = append(ar.Files, txtar.File{Name: want})
		at = len(ar.Files) - 1
	}
	ar.Files[at].Data = []byte(got)
	return os.WriteFile(file, txtar.Format(ar), 0o644)
}

// lock takes the lock file path, created exclusively, and returns its
// release. A lock older than a minute is taken to be left by a test that
// died, and broken.
func lock(path string) (func(), error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if info, err := os.Stat(path); err == nil && time.Since(info.ModTime()) > time.Minute {
			os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: held for two minutes", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// diff shows the first lines where want and got differ.
func diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + w + "\n got: " + g + "\n(got in full:)\n" + got
		}
	}
	return ""
}
