package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// streamPath matches the paths that name one of the process's own open
// files: /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N (what a
// shell's process substitution passes).
var streamPath = regexp.MustCompile(`^(/dev/(stdout|stderr|fd/[0-9]+)|/proc/self/fd/[0-9]+)$`)

// An OutputError is a -o target that metalab refuses to write, because
// writing it could destroy something that is not the user's output.
type OutputError struct {
	Path string
	Why  string
}

func (e *OutputError) Error() string { return fmt.Sprintf("-o %s: %s", e.Path, e.Why) }

// WriteFileAtomic writes a command's output file (the -o of every
// command). It never destroys anything but the file it was asked to
// replace:
//
//   - a new path or an existing regular file is written through a
//     temporary file in the same directory and a rename, so readers never
//     see a partial file and a failed write leaves the old file intact; a
//     replaced file keeps its permission bits (a new one gets 0644). The
//     rename makes a new file: other hard links keep the old contents;
//   - an existing regular file that the user cannot write is refused,
//     although its directory would allow replacing it;
//   - a stream the user asked for by name, /dev/stdout, /dev/stderr,
//     /dev/fd/N or /proc/self/fd/N, is written in place (appending, so
//     that a redirected standard output is not overwritten from its
//     start), as is /dev/null;
//   - a directory, a symbolic link (to anything: a link is never replaced
//     and never written through), a named pipe, a socket or a device is
//     refused with an *OutputError.
func WriteFileAtomic(path string, data []byte) error {
	if path == "/dev/null" || streamPath.MatchString(filepath.Clean(path)) {
		return writeStream(path, data)
	}
	perm := fs.FileMode(0o644)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("write %s: %w", path, err)
	default:
		if why := refuse(path, fi); why != "" {
			return &OutputError{Path: path, Why: why}
		}
		perm = fi.Mode().Perm()
	}
	return replace(path, data, perm)
}

// refuse says why the existing file fi at path may not be replaced, or "".
func refuse(path string, fi fs.FileInfo) string {
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			target = "?"
		}
		return fmt.Sprintf("is a symbolic link (to %s); give the path of the file itself", target)
	case m.IsDir():
		return "is a directory; give a file path"
	case m&fs.ModeNamedPipe != 0:
		return "is a named pipe; write to a file, or to /dev/stdout and redirect"
	case m&fs.ModeSocket != 0:
		return "is a socket"
	case m&fs.ModeDevice != 0:
		return "is a device; only /dev/null, /dev/stdout, /dev/stderr and /dev/fd/N are written"
	case !m.IsRegular():
		return "is not a regular file"
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return "is not writable; it is left as it is"
		}
		return err.Error()
	}
	f.Close()
	return ""
}

// replace writes data to path through a temporary file with mode perm and
// a rename.
func replace(path string, data []byte, perm fs.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(name, perm); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeStream writes data to an already open stream named by path.
func writeStream(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
