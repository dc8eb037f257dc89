// Package cmdutil holds what metalab's commands share: injected IO
// streams, the Factory of dependencies, the usage-error type and helpers to
// load kernels and write outputs safely.
package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"metalab/backend"
	"metalab/internal/inputfile"
	"metalab/msl"
	"metalab/mutate"
	"metalab/variants"
)

// IOStreams are the streams a command reads and writes, injected so that
// commands run in-process in tests.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// System returns the process's standard streams.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// Test returns streams backed by buffers: input, output, error output.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// A Factory supplies the dependencies commands need.
type Factory struct {
	IOStreams *IOStreams
	ReadFile  func(name string) ([]byte, error) // reads kernel sources, specs and patches: regular files up to --max-input-size (inputfile.ReadFile)
	Version   string                            // metalab's version, for what commands record; set by cli.Run
}

// New returns a Factory for the real process.
func New() *Factory {
	return &Factory{IOStreams: System(), ReadFile: inputfile.ReadFile}
}

// A FlagError is a usage error: bad flags or arguments, independent of the
// kernel being worked on. It makes the program print a usage hint and exit
// with status 2.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a *FlagError with a formatted message.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ErrSilent is returned by a command that has already reported its failure;
// the program exits with status 1 without printing anything more.
var ErrSilent = errors.New("silent error")

// A ReportedError is an error a command has already reported (as JSON,
// with --json): the program prints nothing more and exits with the status
// Err's kind maps to (usage, environment, failure).
type ReportedError struct{ Err error }

func (e *ReportedError) Error() string { return e.Err.Error() }
func (e *ReportedError) Unwrap() error { return e.Err }

// ErrorJSON is how a command with --json reports an error: one JSON
// object, on standard output when the command wrote nothing there yet (so
// that standard output holds one JSON document, the result or the error),
// else on standard error. The root command writes it for every command
// (cli.Run); a command that writes it itself returns a *ReportedError.
type ErrorJSON struct {
	Error string `json:"error"`
	// Kind is "usage" (exit 2), "environment" (exit 3), "conflict"
	// (exit 4), "site-ref" (exit 5), "interrupted" or "error" (exit 1).
	Kind string `json:"kind"`
}

// ErrorKind classifies err as ErrorJSON.Kind does. It agrees with the exit
// status cli.Run gives err.
func ErrorKind(err error) string {
	var fe *FlagError
	var env *backend.EnvError
	var conflict *variants.ConflictError
	var refErr mutate.RefError
	switch {
	case errors.As(err, &fe):
		return "usage"
	case errors.As(err, &env) || OutOfSpace(err):
		return "environment"
	case errors.As(err, &conflict):
		return "conflict"
	case errors.As(err, &refErr):
		return "site-ref"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	}
	return "error"
}

// Interrupted returns nil while ctx is live, and once it is done (Ctrl-C,
// SIGTERM) an error that says what was not done: the message for a command
// that stops with nothing to show. It is an "interrupted" error
// (ErrorKind), exit status 1.
func Interrupted(ctx context.Context, what string) error {
	if ctx == nil || ctx.Err() == nil {
		return nil
	}
	return &interruptedError{what: what, err: ctx.Err()}
}

// An interruptedError is context.Canceled (errors.Is) that says what was
// not done.
type interruptedError struct {
	what string
	err  error
}

func (e *interruptedError) Error() string { return "interrupted before " + e.what }
func (e *interruptedError) Unwrap() error { return e.err }

// Interruptible runs fn, the part of a command that reads and analyses and
// writes nothing, and returns its error. When ctx is done first it returns
// Interrupted(ctx, what) at once, whatever fn is doing, and leaves fn to
// the process's exit: a command stops within moments of Ctrl-C even in an
// analysis that does not look at ctx. When fn finishes but ctx is done,
// the analysis may have given up half way (msl.File.SetContext): that is
// Interrupted too.
func Interruptible(ctx context.Context, what string, fn func() error) error {
	if ctx == nil {
		return fn()
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if ierr := Interrupted(ctx, what); ierr != nil {
			return ierr
		}
		return err
	case <-ctx.Done():
		return Interrupted(ctx, what)
	}
}

// OutOfSpace reports whether err is the machine's and not the job's: a
// full disk (ENOSPC, and SQLite's "database or disk is full"), a quota
// exceeded (EDQUOT) or a read-only file system (EROFS) where output is
// written. Such an error exits with status 3, as an EnvError does.
func OutOfSpace(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS} {
		if errors.Is(err, e) {
			return true
		}
	}
	// SQLite's result codes: SQLITE_FULL is 13 (its extended codes keep
	// it in the low byte).
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 13
}

// ExactArgs is cobra.ExactArgs returning a *FlagError that names the
// expected arguments.
func ExactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == n:
		case n == 0:
			return FlagErrorf("%s: takes no arguments, got %d (%s)", cmd.Name(), len(args), strings.Join(args, " "))
		default:
			return FlagErrorf("%s: want %d argument(s) %s, got %d", cmd.Name(), n, names, len(args))
		}
		return nil
	}
}

// Macros are the preprocessor flags of a command that reads a kernel:
// -D NAME=VALUE, -U NAME and -I DIR.
type Macros struct {
	Defines     []string // -D NAME[=VALUE]
	Undefs      []string // -U NAME
	IncludeDirs []string // -I DIR
}

// LoadKernel reads and parses the kernel source at path with the -D
// defines (NAME=VALUE), which decide #if branches and, kept in the File,
// the constants mutations evaluate, the -U undefines and the -I include
// directories, where #include "..." is looked for after the kernel's own
// directory (headers are read with readFile too). Every command that reads
// a kernel loads it here so that the same flags give the same sites and
// sizes. A source that does not parse yields the parser's positioned
// errors (file:line:col: msg); what the parser could not see through is in
// the File's Warnings, for PrintWarnings.
func LoadKernel(readFile func(string) ([]byte, error), path string, m Macros) (*msl.File, error) {
	defs, err := ParseDefines(m.Defines)
	if err != nil {
		return nil, err
	}
	if err := checkUndefs(m.Undefs); err != nil {
		return nil, err
	}
	src, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kernel: %w", err)
	}
	return msl.ParseOptions(path, src, msl.Options{Defines: defs, Undefs: m.Undefs, IncludeDirs: m.IncludeDirs, ReadFile: readFile})
}

// PrintWarnings writes the parser's warnings about f, one per line as
// file:line:col: warning: msg, at most msl.MaxShown of them and a count of
// the rest.
func PrintWarnings(w io.Writer, f *msl.File) {
	for i, e := range f.Warnings {
		if i == msl.MaxShown {
			fmt.Fprintf(w, "(and %d more warnings)\n", len(f.Warnings)-msl.MaxShown)
			break
		}
		fmt.Fprintf(w, "%s: warning: %s\n", e.Pos, e.Msg)
	}
}

// AddMacroFlags adds -D NAME[=VALUE], -U NAME and -I DIR to a command that
// reads a kernel, so every such command states macros the same way.
func AddMacroFlags(fs *pflag.FlagSet, defines, undefs, includeDirs *[]string) {
	fs.StringArrayVarP(defines, "define", "D", nil, "preprocessor define `NAME=VALUE` (repeatable; VALUE defaults to 1): decides #if branches, trip counts and sizes; the file's own #define wins, as with the compiler")
	fs.StringArrayVarP(undefs, "undefine", "U", nil, "macro `NAME` is not defined (repeatable): #ifdef NAME is false rather than undecided")
	fs.StringArrayVarP(includeDirs, "include-dir", "I", nil, "look for #include \"...\" headers in `DIR` after the kernel's directory (repeatable): their macros, types, constants and functions are then known; sites and edits stay in the kernel file")
}

// CheckMacros reports a usage error for a malformed -D or -U.
func CheckMacros(defines, undefs []string) error {
	if _, err := ParseDefines(defines); err != nil {
		return err
	}
	return checkUndefs(undefs)
}

func checkUndefs(undefs []string) error {
	for _, u := range undefs {
		if !isIdent(u) {
			return FlagErrorf("bad -U %q: want a macro NAME", u)
		}
	}
	return nil
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// SameFile reports whether paths a and b name the same existing file, or
// the same path once cleaned and made absolute.
func SameFile(a, b string) bool {
	if sa, err := os.Stat(a); err == nil {
		if sb, err := os.Stat(b); err == nil {
			return os.SameFile(sa, sb)
		}
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// ParseDefines parses -D NAME=VALUE flags; a bare NAME means NAME=1.
func ParseDefines(defs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, d := range defs {
		name, val, ok := strings.Cut(d, "=")
		if !ok {
			val = "1"
		}
		if !isIdent(name) {
			return nil, FlagErrorf("bad -D %q: want NAME=VALUE", d)
		}
		m[name] = val
	}
	return m, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Progress returns a function that writes progress lines to w, but only
// once after has passed since Progress was called, so quick commands stay
// quiet.
func Progress(w io.Writer, after time.Duration) func(string) {
	start := time.Now()
	var mu sync.Mutex // check --jobs reports from several goroutines
	return func(msg string) {
		if d := time.Since(start); d >= after {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(w, "[%4.0fs] %s\n", d.Seconds(), msg)
		}
	}
}
