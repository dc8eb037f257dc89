package darwincheck

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module writes a scratch module, with a stand-in darwinkit under dk/
// (replaced, so nothing is downloaded), and returns its directory.
func module(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	base := map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n\nrequire github.com/progrium/darwinkit v0.0.0\n\nreplace github.com/progrium/darwinkit => ./dk\n",
		"dk/go.mod": "module github.com/progrium/darwinkit\n\ngo 1.18\n",
		"dk/objc/objc.go": `package objc

// #include <stdlib.h>
import "C"

import "unsafe"

type Object struct{ ptr unsafe.Pointer }

func (o Object) Release() { C.free(o.ptr) }

func WrapAsProtocol[T any](name string, d T) Object { panic(name) }
`,
		"dk/metal/metal.go": `package metal

import "github.com/progrium/darwinkit/objc"

type State struct{ objc.Object }

type Encoder struct{ objc.Object }

func (e Encoder) SetState(s State) {
	po := objc.WrapAsProtocol("MTLState", s)
	_ = po
}

func (e Encoder) SetLength(n uint) {}

func NewEncoder() Encoder { return Encoder{} }
`,
	}
	for name, text := range files {
		base[name] = text
	}
	for name, text := range base {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	return dir
}

const app = `//go:build darwin

package app

// #include <stdlib.h>
import "C"

import "github.com/progrium/darwinkit/metal"

func Use(s metal.State) {
	e := metal.NewEncoder()
	e.SetLength(uint(C.size_t(1)))
	e.SetState(s)
	f := e.SetState
	_ = f
	e.Release()
}
`

func errorsText(r *Result) string {
	var b strings.Builder
	for _, e := range r.Errors() {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}

func TestCheckSelectsTargetFiles(t *testing.T) {
	dir := module(t, map[string]string{
		"app/app_darwin.go": app,
		"app/app_linux.go":  "//go:build linux\n\npackage app\n\nvar broken int = \"only on linux\"\n",
	})
	r, err := Check(context.Background(), Config{Dir: dir}, "./app")
	if err != nil {
		t.Fatal(err)
	}
	if errs := r.Errors(); len(errs) > 0 {
		t.Fatalf("darwin/arm64 check of a correct package reported errors:\n%s", errorsText(r))
	}
	p := r.Package("example.com/m/app")
	if p == nil || !p.Target || strings.Join(p.GoFiles, ",") != "app_darwin.go" {
		t.Fatalf("target package = %+v, want app_darwin.go only", p)
	}
	for _, dep := range []string{Darwinkit + "/objc", Darwinkit + "/metal"} {
		if d := r.Package(dep); d == nil || d.Target || d.Info == nil {
			t.Errorf("dependency %s: %+v, want checked with bodies", dep, d)
		}
	}
	if total, targets := r.Files(); targets != 1 || total <= targets {
		t.Errorf("Files() = %d total, %d in targets; want 1 in targets and more in all", total, targets)
	}
}

func TestCheckReportsErrors(t *testing.T) {
	tests := []struct {
		name, file, text, want string
	}{
		{"type error in a darwin file", "app/bad_darwin.go",
			"//go:build darwin\n\npackage app\n\nvar n int = \"x\"\n", "bad_darwin.go:5:13: cannot use \"x\""},
		{"missing method on a darwinkit type", "app/bad_darwin.go",
			"//go:build darwin\n\npackage app\n\nimport \"github.com/progrium/darwinkit/metal\"\n\nfunc End(e metal.Encoder) { e.EndEncoding() }\n",
			"e.EndEncoding undefined"},
		{"wrong argument type", "app/bad_darwin.go",
			"//go:build darwin\n\npackage app\n\nimport \"github.com/progrium/darwinkit/metal\"\n\nfunc L(e metal.Encoder) { e.SetLength(-1) }\n",
			"cannot use -1"},
		{"arm64 file", "app/bad_arm64.go", "package app\n\nvar f float32 = 1 << 200\n", "bad_arm64.go:3:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := module(t, map[string]string{"app/app_darwin.go": app, tt.file: tt.text})
			r, err := Check(context.Background(), Config{Dir: dir}, "./app")
			if err != nil {
				t.Fatal(err)
			}
			if got := errorsText(r); !strings.Contains(got, tt.want) {
				t.Errorf("errors = %q, want one containing %q", got, tt.want)
			}
		})
	}
}

func TestCheckTests(t *testing.T) {
	dir := module(t, map[string]string{
		"app/app_darwin.go":      app,
		"app/app_darwin_test.go": "//go:build darwin\n\npackage app\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { Use(1) }\n",
		"app/x_test.go":          "package app_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/app\"\n)\n\nfunc TestY(t *testing.T) { app.Missing() }\n",
	})
	r, err := Check(context.Background(), Config{Dir: dir}, "./app")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors()) != 0 {
		t.Fatalf("without Tests, test files were checked:\n%s", errorsText(r))
	}
	r, err = Check(context.Background(), Config{Dir: dir, Tests: true}, "./app")
	if err != nil {
		t.Fatal(err)
	}
	got := errorsText(r)
	for _, want := range []string{"app_darwin_test.go:7:32: cannot use 1", "x_test.go:9:32: undefined: app.Missing"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors = %q, want one containing %q", got, want)
		}
	}
	if n := len(r.Errors()); n != 2 {
		t.Errorf("%d errors, want 2 (package errors must not repeat):\n%s", n, got)
	}
}

func TestCheckNoFiles(t *testing.T) {
	dir := module(t, map[string]string{
		"app/app_darwin.go":    app,
		"linuxonly/l_linux.go": "package linuxonly\n",
	})
	for _, pattern := range []string{"./linuxonly", "./nosuchdir"} {
		if _, err := Check(context.Background(), Config{Dir: dir}, pattern); err == nil {
			t.Errorf("Check(%s) succeeded, want an error: it selects no file for darwin", pattern)
		} else if !strings.Contains(err.Error(), "no Go files") {
			t.Errorf("Check(%s): %v, want it to say there are no Go files", pattern, err)
		}
	}
	if _, err := Check(context.Background(), Config{Dir: dir}); err == nil {
		t.Error("Check with no patterns succeeded")
	}
}

func TestDarwinkitCalls(t *testing.T) {
	dir := module(t, map[string]string{"app/app_darwin.go": app})
	r, err := Check(context.Background(), Config{Dir: dir}, "./app")
	if err != nil {
		t.Fatal(err)
	}
	calls, err := DarwinkitCalls(r, "example.com/m/app")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range calls {
		got = append(got, c.Func.Name()+map[bool]string{true: "!", false: ""}[c.Wraps]+"@"+filepath.Base(c.Pos.Filename)+":"+strconv.Itoa(c.Pos.Line))
	}
	// NewEncoder, SetLength, SetState (called), SetState (method value),
	// Release (promoted from objc.Object).
	want := "NewEncoder@app_darwin.go:11 SetLength@app_darwin.go:12 SetState!@app_darwin.go:13 SetState!@app_darwin.go:14 Release@app_darwin.go:16"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("calls:\n got %s\nwant %s", g, want)
	}
	if _, err := DarwinkitCalls(r, Darwinkit+"/nosuch"); err == nil {
		t.Error("DarwinkitCalls of an unchecked package succeeded")
	}
}

// TestDarwinkitCallsNarrow: a getter whose body is objc.Call[bool] (or
// uint32), and objc.Call[bool] made directly, are narrow; objc.Call[uint]
// and objc.Call[uint64] are not.
func TestDarwinkitCallsNarrow(t *testing.T) {
	dir := module(t, map[string]string{
		"dk/objc/call.go": `package objc

func Call[T any](o Object, sel string) T { var t T; return t }
`,
		"dk/metal/getters.go": `package metal

import "github.com/progrium/darwinkit/objc"

type Status uint32

func (e Encoder) Enabled() bool   { return objc.Call[bool](e.Object, "isEnabled") }
func (e Encoder) Status() Status  { return objc.Call[Status](e.Object, "status") }
func (e Encoder) Width() uint     { return objc.Call[uint](e.Object, "width") }
func (e Encoder) Bytes() uint64   { return objc.Call[uint64](e.Object, "bytes") }
`,
		"app/app_darwin.go": `//go:build darwin

package app

import (
	"github.com/progrium/darwinkit/metal"
	"github.com/progrium/darwinkit/objc"
)

func Use(e metal.Encoder) {
	_ = e.Enabled()
	_ = e.Status()
	_ = e.Width()
	_ = e.Bytes()
	_ = objc.Call[int8](e.Object, "small")
	_ = objc.Call[uint64](e.Object, "wide")
}
`,
	})
	r, err := Check(context.Background(), Config{Dir: dir}, "./app")
	if err != nil {
		t.Fatal(err)
	}
	if errs := r.Errors(); len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	calls, err := DarwinkitCalls(r, "example.com/m/app")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range calls {
		got = append(got, c.Func.Name()+"="+c.Narrow)
	}
	want := "Enabled=bool Status=github.com/progrium/darwinkit/metal.Status Width= Bytes= Call=int8 Call="
	if g := strings.Join(got, " "); g != want {
		t.Errorf("calls:\n got %s\nwant %s", g, want)
	}
}
