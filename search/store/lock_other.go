//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

// lockFile takes no lock where flock is not available: two sweeps must not
// write one store at the same time there.
func lockFile(path string) (func() error, error) {
	return func() error { return nil }, nil
}
