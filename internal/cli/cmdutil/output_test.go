package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mode := func(p string) fs.FileMode {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode()
	}

	t.Run("new file", func(t *testing.T) {
		p := filepath.Join(dir, "new.metal")
		if err := WriteFileAtomic(p, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if read(p) != "new" || mode(p) != 0o644 {
			t.Errorf("got %q mode %v, want \"new\" 0644", read(p), mode(p))
		}
	})
	for _, perm := range []fs.FileMode{0o600, 0o755, 0o640} {
		t.Run(fmt.Sprintf("replace keeps mode %o", perm), func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("old%o.metal", perm))
			if err := os.WriteFile(p, []byte("old"), perm); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, perm); err != nil { // past the umask
				t.Fatal(err)
			}
			if err := WriteFileAtomic(p, []byte("new")); err != nil {
				t.Fatal(err)
			}
			if read(p) != "new" || mode(p) != perm {
				t.Errorf("got %q mode %v, want \"new\" %v", read(p), mode(p), perm)
			}
		})
	}
	t.Run("missing directory", func(t *testing.T) {
		if err := WriteFileAtomic(filepath.Join(dir, "missing", "v.metal"), []byte("x")); err == nil {
			t.Error("write into a missing directory succeeded")
		}
	})

	target := filepath.Join(dir, "target.metal")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.metal")
	dangling := filepath.Join(dir, "dangling.metal")
	fifo := filepath.Join(dir, "fifo")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("symlinks unsupported here:", err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, path, want string }{
		{"directory", sub, "is a directory"},
		{"symlink to a file", link, "is a symbolic link (to " + target + ")"},
		{"dangling symlink", dangling, "is a symbolic link"},
		{"fifo", fifo, "is a named pipe"},
		{"device", "/dev/zero", "is a device"},
	} {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			if _, err := os.Lstat(tt.path); err != nil {
				t.Skip("no", tt.path, "here")
			}
			before := mode(tt.path)
			err := WriteFileAtomic(tt.path, []byte("x"))
			var oe *OutputError
			if !errors.As(err, &oe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want an OutputError saying %q", err, tt.want)
			}
			if mode(tt.path) != before {
				t.Errorf("mode changed from %v to %v", before, mode(tt.path))
			}
		})
	}
	if read(target) != "keep" || mode(link)&fs.ModeSymlink == 0 {
		t.Error("a refused write changed the link or its target")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}

	t.Run("read-only file", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root may write any file, so a read-only file cannot be tested")
		}
		p := filepath.Join(dir, "ro.metal")
		if err := os.WriteFile(p, []byte("keep"), 0o444); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(p, []byte("x")); err == nil || !strings.Contains(err.Error(), "is not writable") {
			t.Errorf("error = %v, want is not writable", err)
		}
		if read(p) != "keep" {
			t.Error("read-only file replaced")
		}
	})
	t.Run("dev null", func(t *testing.T) {
		fi, err := os.Stat("/dev/null")
		if err != nil {
			t.Skip("no /dev/null")
		}
		if err := WriteFileAtomic("/dev/null", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if after, err := os.Stat("/dev/null"); err != nil || after.Mode() != fi.Mode() {
			t.Errorf("/dev/null is now %v, %v", after.Mode(), err)
		}
	})
	t.Run("fd stream", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		path := fmt.Sprintf("/dev/fd/%d", w.Fd())
		if _, err := os.Stat(path); err != nil {
			w.Close()
			t.Skip("no /dev/fd here")
		}
		if err := WriteFileAtomic(path, []byte("through the pipe")); err != nil {
			w.Close()
			t.Fatal(err)
		}
		w.Close()
		got, _ := io.ReadAll(r)
		if string(got) != "through the pipe" {
			t.Errorf("read %q from the pipe", got)
		}
	})
}
