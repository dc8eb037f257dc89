package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"metalab/internal/cli/cmdutil"
)

// sqliteErr stands for modernc.org/sqlite's *Error: a result code.
type sqliteErr int

func (e sqliteErr) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e sqliteErr) Code() int     { return int(e) }

// TestOutOfSpaceExitsEnv checks that a full disk, a quota or a read-only
// file system where output goes exits 3 (this machine cannot do it), as
// the README says, however deeply the error is wrapped, and that other
// write errors stay failures.
func TestOutOfSpaceExitsEnv(t *testing.T) {
	wrap := func(e error) error {
		return fmt.Errorf("write report: %w", &fs.PathError{Op: "write", Path: "out/report.md", Err: e})
	}
	for _, tt := range []struct {
		err  error
		want ExitCode
		kind string
	}{
		{wrap(syscall.ENOSPC), ExitEnv, "environment"},
		{wrap(syscall.EDQUOT), ExitEnv, "environment"},
		{wrap(syscall.EROFS), ExitEnv, "environment"},
		{fmt.Errorf("store: %w", sqliteErr(13)), ExitEnv, "environment"}, // SQLITE_FULL
		{fmt.Errorf("store: %w", sqliteErr(10)), ExitError, "error"},     // SQLITE_IOERR
		{&cmdutil.ReportedError{Err: wrap(syscall.ENOSPC)}, ExitEnv, "environment"},
		{wrap(syscall.EACCES), ExitError, "error"},
		{wrap(syscall.EIO), ExitError, "error"},
		{errors.New("no space left on device"), ExitError, "error"}, // text is not an errno
	} {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %d, want %d", tt.err, got, tt.want)
		}
		if got := cmdutil.ErrorKind(tt.err); got != tt.kind {
			t.Errorf("ErrorKind(%v) = %q, want %q", tt.err, got, tt.kind)
		}
	}
}
