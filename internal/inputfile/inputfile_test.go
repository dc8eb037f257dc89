package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "k.metal")
	if err := os.WriteFile(small, []byte("kernel void k() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadLimit(small, 19); err != nil || string(b) != "kernel void k() {}\n" {
		t.Errorf("a file at the limit: %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadLimit(small, 18); !errors.As(err, &tl) || tl.Size != 19 || !strings.Contains(err.Error(), "over the 18 bytes input limit") {
		t.Errorf("a file a byte over the limit: %v", err)
	}
	link := filepath.Join(dir, "link.metal")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLimit(link, 64); err != nil {
		t.Errorf("a symlink to a regular file: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.metal")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/dev/zero": "/dev/zero: a character device, not a regular file",
		fifo:        fifo + ": a named pipe, not a regular file",
		dir:         dir + ": a directory, not a regular file",
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadLimit(path, 1<<20); done <- err }()
		select {
		case err := <-done:
			var nr *NotRegularError
			if !errors.As(err, &nr) || err.Error() != want || !IsInputError(err) {
				t.Errorf("%s: %v, want %s", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5s", path)
		}
	}
	if _, err := ReadLimit(filepath.Join(dir, "missing"), 64); !errors.Is(err, os.ErrNotExist) || IsInputError(err) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestReadFileUsesLimit(t *testing.T) {
	defer SetLimit(DefaultLimit)
	p := filepath.Join(t.TempDir(), "k.metal")
	if err := os.WriteFile(p, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); err != nil {
		t.Fatal(err)
	}
	if err := (Flag{}).Set("1K"); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "over the 1KiB input limit") {
		t.Errorf("after --max-input-size 1K: %v", err)
	}
	if got := (Flag{}).String(); got != "1KiB" {
		t.Errorf("flag shows %q", got)
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"1": 1, "64K": 64 << 10, "64KiB": 64 << 10, "2m": 2 << 20, "1 GiB": 1 << 30, "3MB": 3 << 20, "100b": 100} {
		if n, err := ParseSize(s); err != nil || n != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, n, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1", "lots", "1T", "99999999999G"} {
		if n, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", s, n)
		}
	}
}
