// Package all is the list of metalab's backends: it imports every backend
// package and knows each by name, in the order they are listed (cpu,
// cuda, metal) and the order --backend auto prefers them (metal, cuda,
// cpu). A program links a backend in by importing this package; no
// backend registers itself.
package all

import (
	"context"
	"os"

	"metalab/backend"
	"metalab/backend/cpu"
	"metalab/backend/cuda"
	"metalab/backend/metal"
)

// Preference is the order Choose("auto") tries backends in: the real
// thing first.
var Preference = []string{"metal", "cuda", "cpu"}

// registry lists the backends with their default options: the cpu
// backend's defaults, the cuda backend's as the environment asks
// (METALAB_CUDA_DEVICE, METALAB_CUDA_RACECHECK), and the metal backend,
// which says why it cannot run where it cannot.
var registry = backend.NewRegistry(Preference,
	backend.Entry{Name: "cpu", New: func() backend.Backend { return cpu.New(cpu.Options{}) }},
	backend.Entry{Name: "cuda", New: func() backend.Backend { return cuda.New(cuda.EnvOptions(os.Getenv)) }},
	backend.Entry{Name: metal.Name, New: func() backend.Backend { return metal.New() }},
)

// Names lists the backends' names: cpu, cuda, metal.
func Names() []string { return registry.Names() }

// All returns a fresh instance of every backend, in Names order, then of
// every one added with Register, by name.
func All() []backend.Backend { return registry.All() }

// Lookup returns a fresh instance of the backend called name.
func Lookup(name string) (backend.Backend, bool) { return registry.Lookup(name) }

// Choose returns the backend called name, or for "auto" the first of
// Preference that is available here. An unknown name is a
// *backend.UnknownError naming the known ones.
func Choose(ctx context.Context, name string) (backend.Backend, error) {
	return registry.Choose(ctx, name)
}

// Register adds a backend under name (a test's fake backend), listed after
// the others, or replaces the constructor of one of them.
func Register(name string, newBackend func() backend.Backend) { registry.Register(name, newBackend) }
