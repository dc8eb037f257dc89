package cpu

import "metalab/backend"

// init registers the cpu backend, with default Options, as "cpu".
func init() {
	backend.Register("cpu", func() backend.Backend { return New(Options{}) })
}
