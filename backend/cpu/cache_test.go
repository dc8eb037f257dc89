package cpu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"metalab/backend"
	"metalab/internal/testenv"
)

// TestConcurrentBackendsShareCache starts two Backends (two runner
// processes, as two metalab processes would have) on one empty cache and
// has them build the runner and compile the same kernel at the same time.
// Both must get a working program, and the cache must hold one runner, one
// shared object and no leftover temporaries.
func TestConcurrentBackendsShareCache(t *testing.T) {
	testenv.RequireCXX(t)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "faults.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	in := []uint32{1, 2, 3, 4, 5, 6, 7, 8}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	backends := make([]*Backend, 2)
	for i := range backends {
		backends[i] = New(Options{CacheDir: dir, Workers: 1})
		t.Cleanup(func() { backends[i].Close() })
	}
	for i, b := range backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = func() error {
				ctx := context.Background()
				p, err := b.CompileCPP(ctx, CPPSource{Name: "faults.cpp", CPP: src, Kernel: "copy"})
				if err != nil {
					return fmt.Errorf("compile: %w", err)
				}
				defer p.Close()
				res, err := p.Run(ctx, backend.Dispatch{
					Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 32)}},
					Threadgroups: backend.Dim3{X: 2, Y: 1, Z: 1},
					Threads:      backend.Dim3{X: 4, Y: 1, Z: 1},
				})
				if err != nil {
					return fmt.Errorf("run: %w", err)
				}
				if len(res.Outputs[1]) != 4*len(in) {
					return fmt.Errorf("output read back with %d bytes, want %d", len(res.Outputs[1]), 4*len(in))
				}
				for j, v := range u32s(res.Outputs[1]) {
					if v != in[j]*2 {
						return fmt.Errorf("out[%d] = %d, want %d", j, v, in[j]*2)
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("backend %d: %v", i, err)
		}
	}
	if backends[0].starts.Load() == 0 || backends[1].starts.Load() == 0 {
		t.Fatal("the two backends did not run separate runner processes")
	}
	count := func(d, prefix, suffix string) (n int, tmp []string) {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".tmp-") || strings.HasPrefix(e.Name(), ".probe-") {
				tmp = append(tmp, e.Name())
			}
			if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), suffix) {
				n++
			}
		}
		return n, tmp
	}
	if n, tmp := count(dir, "runner-", ""); n != 1 || len(tmp) != 0 {
		t.Errorf("cache root has %d runner dirs (want 1) and temporaries %v", n, tmp)
	}
	if n, tmp := count(filepath.Join(dir, "so"), "", ".so"); n != 1 || len(tmp) != 0 {
		t.Errorf("so dir has %d shared objects (want 1) and temporaries %v", n, tmp)
	}
}

// TestCleanStale checks that setup's cleanup removes only temporaries older
// than an hour.
func TestCleanStale(t *testing.T) {
	root := t.TempDir()
	so := filepath.Join(root, "so")
	if err := os.MkdirAll(filepath.Join(root, ".tmp-runner-abc-1", "runtime"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(so, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{ // path: should survive
		filepath.Join(so, ".tmp-k1-123.so"):     false,
		filepath.Join(so, ".tmp-k2-456.so"):     true, // fresh: may be a compile in progress
		filepath.Join(so, "k1.so"):              true,
		filepath.Join(so, "k1.cpp"):             true,
		filepath.Join(root, ".probe-789", "x"):  false,
		filepath.Join(root, "include-abc", "h"): true,
	}
	now := time.Now()
	old := now.Add(-2 * time.Hour)
	for f, keep := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if !keep || !strings.Contains(f, ".tmp-k2") {
			for _, p := range []string{f, filepath.Dir(f)} {
				if err := os.Chtimes(p, old, old); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := os.Chtimes(filepath.Join(root, ".tmp-runner-abc-1"), old, old); err != nil {
		t.Fatal(err)
	}
	cleanStale(root, now)
	for f, keep := range files {
		_, err := os.Stat(f)
		if keep && err != nil {
			t.Errorf("%s was removed: %v", f, err)
		}
		if !keep && err == nil {
			t.Errorf("stale %s survived", f)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".tmp-runner-abc-1")); err == nil {
		t.Error("stale runner build dir survived")
	}
}

// TestDescribeShowsCache checks that the description `metalab backends`
// prints names the cache directory and its size.
func TestDescribeShowsCache(t *testing.T) {
	b := newBackend(t, Options{})
	n, err := b.CacheSize()
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Fatalf("cache size %d after setup, want > 0 (the runner is in it)", n)
	}
	d := b.Describe()
	if !strings.Contains(d, b.CacheDir()) || !strings.Contains(d, "iB") {
		t.Errorf("Describe() = %q, want the cache dir %s and its size", d, b.CacheDir())
	}
}

func TestHumanBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}} {
		if got := humanBytes(c.n); got != c.want {
			t.Errorf("humanBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestCacheIntegrity damages cached objects in the ways a disk or a careless
// user can — truncated, replaced by another kernel's object, its recorded
// sum removed — and requires each to be rebuilt, never loaded, and the
// kernel to run right afterwards. A damaged runner is rebuilt too.
func TestCacheIntegrity(t *testing.T) {
	dir := t.TempDir()
	b := newBackend(t, Options{CacheDir: dir})
	faults, err := os.ReadFile(filepath.Join("testdata", "tu", "faults.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	groups, err := os.ReadFile(filepath.Join("testdata", "tu", "groups.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	compile := func() *program {
		t.Helper()
		p, err := b.compileCPP(ctx, CPPSource{Name: "faults.cpp", CPP: faults, Kernel: "copy"})
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		return p
	}
	p := compile()
	other, err := b.compileCPP(ctx, CPPSource{Name: "groups.cpp", CPP: groups, Kernel: "reduce"})
	if err != nil {
		t.Fatal(err)
	}
	otherBytes, err := os.ReadFile(other.so)
	if err != nil {
		t.Fatal(err)
	}
	damages := []struct {
		name   string
		damage func(so string) error
	}{
		{"truncated", func(so string) error { return os.Truncate(so, 100) }},
		{"replaced", func(so string) error { return os.WriteFile(so, otherBytes, 0o644) }},
		{"sum removed", func(so string) error { return os.Remove(so + ".sha256") }},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			if err := d.damage(p.so); err != nil {
				t.Fatal(err)
			}
			before := b.compilerRuns.Load()
			q := compile()
			if b.compilerRuns.Load() == before {
				t.Fatalf("a %s object was loaded from the cache instead of rebuilt", d.name)
			}
			if !verifyObject(q.so) {
				t.Fatalf("the rebuilt object does not match its recorded sum")
			}
			in := []uint32{1, 2, 3, 4}
			res := run(t, q, backend.Dispatch{
				Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 16)}},
				Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
				Threads:      backend.Dim3{X: 4, Y: 1, Z: 1},
			})
			if got := u32s(res.Outputs[1]); got[3] != 8 {
				t.Fatalf("out = %v after the rebuild", got)
			}
		})
	}
	// An intact object is a cache hit.
	before := b.compilerRuns.Load()
	compile()
	if b.compilerRuns.Load() != before {
		t.Error("an intact object was rebuilt")
	}

	// A damaged runner is rebuilt before it is ever started.
	b.Close()
	if err := os.Truncate(b.runnerPath, 64); err != nil {
		t.Fatal(err)
	}
	b2 := newBackend(t, Options{CacheDir: dir})
	if _, err := b2.Runner(ctx); err != nil {
		t.Fatalf("runner after damage: %v", err)
	}
	if !verifyObject(b2.runnerPath) {
		t.Fatal("the damaged runner was not rebuilt")
	}
}
