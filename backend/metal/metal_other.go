//go:build !darwin || !cgo

package metal

import (
	"context"
	"runtime"

	"metalab/backend"
)

// A Backend stands in for the metal backend where it cannot be built: on
// any system but macOS, and on macOS without cgo. It says why, and compiles
// nothing.
type Backend struct{}

// New returns the stand-in Backend.
func New() *Backend { return &Backend{} }

// Name returns "metal".
func (b *Backend) Name() string { return Name }

// unavailable says why this build has no metal backend.
func unavailable() string {
	if runtime.GOOS == "darwin" {
		return "metal backend: this metalab was built without cgo; install the Xcode command line tools (xcode-select --install) and rebuild with CGO_ENABLED=1"
	}
	return "metal backend: macOS only"
}

// Available reports false, with the reason.
func (b *Backend) Available(context.Context) (bool, string) { return false, unavailable() }

// Info says the backend is not available here.
func (b *Backend) Info(context.Context) backend.Info {
	return backend.Info{Name: Name, Device: unavailable(), Clock: "gpu", Timing: "Metal GPU time (GPUStartTime to GPUEndTime)"}
}

// Compile fails with an Unavailable failure.
func (b *Backend) Compile(context.Context, backend.Source) (backend.Program, error) {
	return nil, &backend.Failure{Kind: backend.Unavailable, Msg: unavailable()}
}
