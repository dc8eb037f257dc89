// Package buildcache is the compile cache the cpu and cuda backends share:
// a directory where runners, installed headers and compiled kernels are
// kept by content hash. Every file appears by an atomic rename, so
// concurrent metalab processes may share one; an object is used only while
// its content still has the sha256 recorded when it was built.
package buildcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Root returns the directory holding the runners, headers and compiled
// kernels: opt (a backend's Options.CacheDir) if set, else
// $METALAB_CACHE, else <user cache>/metalab.
func Root(opt string) (string, error) {
	if opt != "" {
		return opt, nil
	}
	if d := os.Getenv("METALAB_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache dir (set METALAB_CACHE): %w", err)
	}
	return filepath.Join(d, "metalab"), nil
}

// HashFS hashes every file of fsys (names and contents) into h.
func HashFS(h interface{ Write([]byte) (int, error) }, fsys fs.FS) error {
	return fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		_, _ = h.Write(b)
		return nil
	})
}

// WriteFS copies every file of fsys under dir.
func WriteFS(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// InstallDir makes dir exist with the contents fill writes, atomically:
// fill runs in a fresh temporary directory next to dir which is then renamed
// into place, so concurrent metalab processes never see a half-built dir.
func InstallDir(dir string, fill func(tmp string) error) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-"+filepath.Base(dir)+"-")
	if err != nil {
		return err
	}
	if err := fill(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr == nil {
			return nil // another process installed it first
		}
		return err
	}
	return nil
}

// Record writes the sha256 of the object built at tmp next to its
// final path so, then renames it into place: a reader that sees so also
// sees its sum.
func Record(tmp, so string) error {
	sum, err := FileSHA256(tmp)
	if err != nil {
		return err
	}
	if err := WriteAtomic(so+".sha256", []byte(sum+"\n")); err != nil {
		return err
	}
	return os.Rename(tmp, so)
}

// Verify reports whether the cached object so exists and still has
// the sha256 recorded when it was built. A damaged entry's sum is removed
// (the object itself is replaced by the rebuild).
func Verify(so string) bool {
	want, err := os.ReadFile(so + ".sha256")
	if err != nil {
		return false
	}
	got, err := FileSHA256(so)
	if err != nil {
		return false
	}
	if strings.TrimSpace(string(want)) == got {
		return true
	}
	os.Remove(so + ".sha256")
	return false
}

func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// EnvironmentFault returns the line of compiler output that blames the
// machine rather than the kernel (a full disk, an unwritable directory, a
// compiler killed for memory), or "".
func EnvironmentFault(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if includeRefused.MatchString(line) {
			// An include the compile sandbox (or the file's mode) refused:
			// the source's doing, at its position.
			continue
		}
		for _, m := range []string{"No space left on device", "cannot open output file", "Permission denied",
			"Killed signal terminated program", "Cannot allocate memory", "virtual memory exhausted",
			"cannot execute", "error trying to exec"} {
			if strings.Contains(line, m) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// includeRefused matches the compiler's error for a file a source includes
// and may not read: "file:line:col: fatal error: path: Permission denied".
var includeRefused = regexp.MustCompile(`^\S+:\d+:\d+: (fatal )?error: .*: Permission denied$`)

// DefineArgs returns -DNAME=VALUE (or -DNAME for an empty value) for each
// define, sorted by name so that the flags, and the key they go into, do
// not depend on map order.
func DefineArgs(defines map[string]string) []string {
	names := make([]string, 0, len(defines))
	for k := range defines {
		names = append(names, k)
	}
	sort.Strings(names)
	args := make([]string, 0, len(names))
	for _, k := range names {
		if v := defines[k]; v != "" {
			args = append(args, "-D"+k+"="+v)
		} else {
			args = append(args, "-D"+k)
		}
	}
	return args
}

// ObjectKey is the cache key of a compiled kernel object: the compiler's
// identity, the prelude's version, the compiler's arguments, the TU's text
// and the headers directly in dir (a hand-written TU may include them; ""
// for none).
func ObjectKey(compiler, prelude string, args []string, text []byte, dir string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00", compiler, prelude, strings.Join(args, "\x01"), len(text))
	_, _ = h.Write(text)
	if dir != "" {
		HashIncludeDir(h, dir)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// HashIncludeDir hashes the header-like files directly in dir, which a TU
// may #include, so that editing them invalidates the cache.
func HashIncludeDir(h interface{ Write([]byte) (int, error) }, dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".h", ".hpp", ".metal", ".inc", ".hh":
		default:
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > 4<<20 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		_, _ = h.Write(b)
	}
}

// WriteAtomic writes b to path through a temporary file in the same
// directory and a rename, so readers see the old file or the whole new one.
func WriteAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// StaleAge is how old a temporary file in the cache must be before setup
// deletes it: a compile or runner build that was killed leaves its
// temporaries behind, and none takes anywhere near this long.
const StaleAge = time.Hour

// CleanStale removes the temporaries (".tmp-*", ".probe-*") older than
// StaleAge directly in each of dirs. It reads a directory or two, so it is
// cheap enough to run at every setup.
func CleanStale(now time.Time, dirs ...string) {
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".tmp-") && !strings.HasPrefix(e.Name(), ".probe-") {
				continue
			}
			info, err := e.Info()
			if err != nil || now.Sub(info.ModTime()) < StaleAge {
				continue
			}
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// Size returns the bytes used by the files under root.
func Size(root string) (int64, error) {
	var n int64
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by a concurrent cleanup
			}
			return err
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("cache size: %w", err)
	}
	return n, nil
}

// HumanBytes formats n bytes with a binary unit, e.g. "12.3 MiB".
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
