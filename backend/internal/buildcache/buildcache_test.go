package buildcache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRecordAndVerify(t *testing.T) {
	dir := t.TempDir()
	so := filepath.Join(dir, "k.so")
	if Verify(so) {
		t.Fatal("a missing object verified")
	}
	tmp := filepath.Join(dir, ".tmp-k.so")
	if err := os.WriteFile(tmp, []byte("object"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Record(tmp, so); err != nil {
		t.Fatal(err)
	}
	if !Verify(so) {
		t.Fatal("a recorded object does not verify")
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary is still there: %v", err)
	}
	if err := os.WriteFile(so, []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if Verify(so) {
		t.Fatal("a damaged object verified")
	}
	if _, err := os.Stat(so + ".sha256"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a damaged object's sum was kept: %v", err)
	}
}

// TestInstallDir installs one directory from several goroutines at once:
// every caller sees it whole, and it is filled once it exists.
func TestInstallDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runner-abc")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = InstallDir(dir, func(tmp string) error {
				time.Sleep(10 * time.Millisecond)
				return os.WriteFile(filepath.Join(tmp, "f"), []byte("whole"), 0o644)
			})
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "whole" {
		t.Errorf("installed file = %q, %v", b, err)
	}
	called := false
	if err := InstallDir(dir, func(string) error { called = true; return nil }); err != nil || called {
		t.Errorf("an existing directory was filled again (%v, %v)", called, err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporaries left behind: %v", left)
	}
	failed := filepath.Join(t.TempDir(), "x")
	if err := InstallDir(failed, func(string) error { return errors.New("no") }); err == nil {
		t.Error("a failed fill was not reported")
	}
	if _, err := os.Stat(failed); !errors.Is(err, os.ErrNotExist) {
		t.Error("a failed fill left its directory")
	}
}

func TestCleanStale(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	now := time.Now()
	old := now.Add(-2 * StaleAge)
	files := map[string]time.Time{
		filepath.Join(a, ".tmp-old"):   old,
		filepath.Join(a, ".tmp-new"):   now,
		filepath.Join(b, ".probe-old"): old,
		filepath.Join(b, "kept.so"):    old,
	}
	for f, mt := range files {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	CleanStale(now, a, b, filepath.Join(a, "missing"))
	for f := range files {
		_, err := os.Stat(f)
		gone := errors.Is(err, os.ErrNotExist)
		want := strings.HasSuffix(f, "-old")
		if gone != want {
			t.Errorf("%s: removed %v, want %v", filepath.Base(f), gone, want)
		}
	}
}

func TestRoot(t *testing.T) {
	t.Setenv("METALAB_CACHE", "/env/cache")
	if r, _ := Root("/opt/cache"); r != "/opt/cache" {
		t.Errorf("Root with an option = %q", r)
	}
	if r, _ := Root(""); r != "/env/cache" {
		t.Errorf("Root with $METALAB_CACHE = %q", r)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 5 << 20: "5.0 MiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestEnvironmentFault(t *testing.T) {
	if got := EnvironmentFault("a.cu(3): error: x\n/tmp/a.o: No space left on device\n"); got != "/tmp/a.o: No space left on device" {
		t.Errorf("EnvironmentFault = %q", got)
	}
	if got := EnvironmentFault("a.cu(3): error: identifier x is undefined\n"); got != "" {
		t.Errorf("a kernel's error blamed on the machine: %q", got)
	}
}

func TestDefineArgsAndObjectKey(t *testing.T) {
	args := DefineArgs(map[string]string{"B": "2", "A": "", "C": "x y"})
	if got := strings.Join(args, " "); got != "-DA -DB=2 -DC=x y" {
		t.Errorf("DefineArgs = %q, want sorted -DA -DB=2 -DC=x y", got)
	}
	k := ObjectKey("g++ 12", "p1", args, []byte("tu"), "")
	for _, other := range []string{
		ObjectKey("g++ 13", "p1", args, []byte("tu"), ""),
		ObjectKey("g++ 12", "p2", args, []byte("tu"), ""),
		ObjectKey("g++ 12", "p1", args[:2], []byte("tu"), ""),
		ObjectKey("g++ 12", "p1", args, []byte("tv"), ""),
	} {
		if other == k {
			t.Errorf("ObjectKey ignores one of its inputs: %s", k)
		}
	}
	if ObjectKey("g++ 12", "p1", args, []byte("tu"), "") != k {
		t.Errorf("ObjectKey is not deterministic")
	}
}
