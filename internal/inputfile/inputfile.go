// Package inputfile reads what metalab is given to work on — kernel
// sources, headers, specs, variants, patches — from regular files of
// bounded size. A device, FIFO or directory named as a source is refused
// with an error naming it instead of being read without end
// (`source: /dev/zero`), and a file over the limit is refused before it
// is read into memory.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// DefaultLimit is the largest input read unless SetLimit raises it.
const DefaultLimit = 64 << 20

var limit atomic.Int64

func init() { limit.Store(DefaultLimit) }

// Limit returns the current limit in bytes.
func Limit() int64 { return limit.Load() }

// SetLimit sets the limit in bytes for every later read; n <= 0 means
// DefaultLimit.
func SetLimit(n int64) {
	if n <= 0 {
		n = DefaultLimit
	}
	limit.Store(n)
}

// A NotRegularError is a path that names something other than a regular
// file (after symlinks): a directory, device, FIFO or socket.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: %s, not a regular file", e.Path, kind(e.Mode))
}

// A TooLargeError is a file over the limit.
type TooLargeError struct {
	Path  string
	Size  int64 // at least this many bytes
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %s is over the %s input limit (raise it with --max-input-size)", e.Path, Size(e.Size), Size(e.Limit))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// ReadFile reads the regular file at path, up to Limit bytes. It has
// os.ReadFile's signature, to stand where that was.
func ReadFile(path string) ([]byte, error) {
	return ReadLimit(path, Limit())
}

// ReadLimit reads the regular file at path, up to max bytes.
func ReadLimit(path string, max int64) ([]byte, error) {
	// Opened without blocking: opening a FIFO for reading would wait for
	// a writer. The mode is checked on the open file, so a path swapped
	// after a Stat cannot slip a device past it.
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	if st.Size() > max {
		return nil, &TooLargeError{Path: path, Size: st.Size(), Limit: max}
	}
	// The size is a hint: the file may grow while it is read, so the read
	// itself stops one byte past the limit.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Path: path, Size: int64(len(b)), Limit: max}
	}
	return b, nil
}

// IsInputError reports whether err is a refused input: not a regular
// file, or over the limit.
func IsInputError(err error) bool {
	var nr *NotRegularError
	var tl *TooLargeError
	return errors.As(err, &nr) || errors.As(err, &tl)
}

// Size writes n bytes the way ParseSize reads them: in the largest unit
// that divides it, else in bytes.
func Size(n int64) string {
	for _, u := range units {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

var units = []struct {
	name string
	n    int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// ParseSize reads a size: a whole number of bytes with an optional unit,
// K/KiB, M/MiB, G/GiB (powers of 1024; case and a B suffix optional).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	lower := strings.ToLower(t)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.n
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q: want a positive number of bytes, optionally with K, M or G", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return n * mult, nil
}

// A Flag is the --max-input-size flag's value: setting it sets the limit.
type Flag struct{}

func (Flag) String() string { return Size(Limit()) }
func (Flag) Type() string   { return "size" }
func (Flag) Set(s string) error {
	n, err := ParseSize(s)
	if err != nil {
		return err
	}
	SetLimit(n)
	return nil
}
