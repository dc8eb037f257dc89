package cmdutil

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/pflag"

	"metalab/backend"
	"metalab/backend/all"
)

// ChooseBackend returns the backend a --backend flag names ("auto" picks
// the first of metal, cuda and cpu that runs here). An unknown name is a
// usage error.
func ChooseBackend(ctx context.Context, name string) (backend.Backend, error) {
	b, err := all.Choose(ctx, name)
	var unknown *backend.UnknownError
	if errors.As(err, &unknown) {
		return nil, &FlagError{Err: err}
	}
	return b, err
}

// DefaultCompileTimeout is --compile-timeout's default.
const DefaultCompileTimeout = 120 * time.Second

// AddCompileTimeoutFlag registers --compile-timeout on flags, for commands
// that compile kernels, storing it in d. Pass the value to
// ChooseBackendWithLimits (or ApplyCompileTimeout).
func AddCompileTimeoutFlag(flags *pflag.FlagSet, d *time.Duration) {
	flags.DurationVar(d, "compile-timeout", DefaultCompileTimeout,
		"`DURATION` one compile of a kernel may take; a variant that takes longer fails with status compile-timeout")
}

// ApplyCompileTimeout sets the compile time limit d on b when b compiles
// (the cpu and cuda backends); a d of 0 or less keeps the backend's
// default.
func ApplyCompileTimeout(b backend.Backend, d time.Duration) {
	if l, ok := b.(backend.CompileLimiter); ok && d > 0 {
		l.SetCompileTimeout(d)
	}
}

// ChooseBackendWithLimits is ChooseBackend, then ApplyCompileTimeout with
// compileTimeout (the --compile-timeout flag's value).
func ChooseBackendWithLimits(ctx context.Context, name string, compileTimeout time.Duration) (backend.Backend, error) {
	b, err := ChooseBackend(ctx, name)
	if err != nil {
		return nil, err
	}
	ApplyCompileTimeout(b, compileTimeout)
	return b, nil
}
