package backends

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/all"
	"metalab/backend/metal"
	"metalab/internal/cli/cmdutil"
)

type stub struct {
	name, why, detail string
}

func (s stub) Name() string { return s.name }
func (s stub) Available(context.Context) (bool, string) {
	return s.why == "", s.why
}
func (s stub) Compile(context.Context, backend.Source) (backend.Program, error) {
	return nil, errors.New("stub")
}
func (s stub) Describe() string                  { return s.detail }
func (s stub) Info(context.Context) backend.Info { return backend.Info{Name: s.name} }

// cached is a stub with an on-disk cache.
type cached struct {
	stub
	dir  string
	size int64
}

func (c cached) CacheDir() string          { return c.dir }
func (c cached) CacheSize() (int64, error) { return c.size, nil }

func stubs() []backend.Backend {
	return []backend.Backend{
		cached{stub: stub{name: "cpu", detail: "g++ 12"}, dir: "/c/metalab", size: 4096},
		cached{stub: stub{name: "cuda", why: "no NVIDIA driver"}, dir: "/c/cuda", size: 1},
	}
}

func TestNewCmdBackends(t *testing.T) {
	tests := []struct {
		args     string
		wantJSON bool
		wantErr  bool
	}{
		{"", false, false},
		{"--json", true, false},
		{"extra", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ios, _, _, _ := cmdutil.Test()
			var got *BackendsOptions
			cmd := NewCmdBackends(&cmdutil.Factory{IOStreams: ios}, func(o *BackendsOptions) error {
				got = o
				return nil
			})
			var argv []string
			if tt.args != "" {
				argv = strings.Fields(tt.args)
			}
			cmd.SetArgs(argv)
			cmd.SetOut(ios.Out)
			cmd.SetErr(ios.ErrOut)
			err := cmd.Execute()
			if tt.wantErr {
				var fe *cmdutil.FlagError
				if !errors.As(err, &fe) {
					t.Fatalf("got %v, want a FlagError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.JSON != tt.wantJSON {
				t.Errorf("JSON = %v, want %v", got.JSON, tt.wantJSON)
			}
			if got.Backends == nil {
				t.Error("Backends not set")
			}
		})
	}
}

func TestBackendsRunText(t *testing.T) {
	ios, _, out, _ := cmdutil.Test()
	if err := backendsRun(&BackendsOptions{IO: ios, Backends: stubs}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), out)
	}
	if f := strings.Fields(lines[1]); len(f) < 3 || f[0] != "cpu" || f[1] != "yes" || !strings.Contains(lines[1], "g++ 12") {
		t.Errorf("cpu line = %q", lines[1])
	}
	if f := strings.Fields(lines[2]); len(f) < 3 || f[0] != "cuda" || f[1] != "no" || !strings.Contains(lines[2], "no NVIDIA driver") {
		t.Errorf("cuda line = %q", lines[2])
	}
}

func TestBackendsRunJSON(t *testing.T) {
	ios, _, out, _ := cmdutil.Test()
	if err := backendsRun(&BackendsOptions{IO: ios, Backends: stubs, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var got []jsonBackend
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []jsonBackend{
		{Name: "cpu", Available: true, Detail: "g++ 12", CacheDir: "/c/metalab", CacheBytes: 4096},
		{Name: "cuda", Why: "no NVIDIA driver"}, // an unavailable backend reports no cache
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDefaultListsKnownBackends(t *testing.T) {
	var names []string
	for _, b := range all.All() {
		names = append(names, b.Name())
	}
	if got := strings.Join(names, ","); !strings.HasPrefix(got, "cpu,cuda,metal") {
		t.Errorf("all.All() = %s, want cpu, cuda, metal first", got)
	}
}

func TestMetalRegistered(t *testing.T) {
	for _, b := range all.All() {
		if b.Name() != "metal" {
			continue
		}
		ok, why := b.Available(context.Background())
		if strings.Contains(why, "not built into") {
			t.Fatalf("metal is not linked into the backends command: %s", why)
		}
		if runtime.GOOS != "darwin" && (ok || why != "metal backend: macOS only") {
			t.Errorf("metal on %s: available %v, %q; want \"metal backend: macOS only\"", runtime.GOOS, ok, why)
		}
		return
	}
	t.Fatal("all.All() lists no metal backend")
}

// selfTested is a stub with a self-test, as the metal backend has.
type selfTested struct {
	stub
	steps []metal.Step
}

func (s selfTested) SelfTest(context.Context) []metal.Step { return s.steps }

func TestBackendsSelfTest(t *testing.T) {
	pass := []metal.Step{{Name: "open the device", OK: true}, {Name: "compile", OK: true, Detail: "pipeline allows 1024 threads"}, {Name: "GPU timestamps", OK: true, Detail: "ran 3µs"}}
	failing := []metal.Step{{Name: "open the device", OK: true}, {Name: "dispatch one thread", Detail: "GPU page fault"}}
	list := func() []backend.Backend {
		return []backend.Backend{
			selfTested{stub: stub{name: "metal", detail: "Apple M5 (found by MTLCreateSystemDefaultDevice); GPU family Apple10"}, steps: pass},
			selfTested{stub: stub{name: "metal2", detail: "Apple M4"}, steps: failing},
			selfTested{stub: stub{name: "metal3", why: "metal backend: macOS only"}, steps: failing},
		}
	}
	ios, _, out, _ := cmdutil.Test()
	if err := backendsRun(&BackendsOptions{IO: ios, Backends: list}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, w := range []string{
		"metal    yes        Apple M5 (found by MTLCreateSystemDefaultDevice); GPU family Apple10",
		"metal2   no         self-test failed at dispatch one thread: GPU page fault (Apple M4)",
		"metal3   no         metal backend: macOS only",
		"metal self-test:\n  ok   open the device\n  ok   compile: pipeline allows 1024 threads\n  ok   GPU timestamps: ran 3µs\n",
		"metal2 self-test:\n  ok   open the device\n  FAIL dispatch one thread: GPU page fault\n",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "metal3 self-test") {
		t.Errorf("an unavailable backend's self-test ran:\n%s", text)
	}
	ios, _, out, _ = cmdutil.Test()
	if err := backendsRun(&BackendsOptions{IO: ios, Backends: list, JSON: true}); err != nil {
		t.Fatal(err)
	}
	var got []jsonBackend
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !got[0].Available || len(got[0].SelfTest) != 3 || got[1].Available || got[1].SelfTest[1].OK || got[2].SelfTest != nil {
		t.Errorf("JSON rows %+v", got)
	}
}
