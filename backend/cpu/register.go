package cpu

import "metalab/backend"

// init registers the cpu backend, with default Options, as "cpu" in
// package backend's package-level registry, for the callers that have not
// moved to package all (metalab/backend/all), which lists the backends
// itself.
func init() {
	backend.Register("cpu", func() backend.Backend { return New(Options{}) })
}
