package cuda

import (
	"os"
	"strconv"

	"metalab/backend"
)

// init registers the cuda backend as "cuda", with default Options but for
// what the environment asks: METALAB_CUDA_DEVICE (a device index) and
// METALAB_CUDA_RACECHECK (true: run under compute-sanitizer's racecheck).
func init() {
	backend.Register("cuda", func() backend.Backend { return New(envOptions(os.Getenv)) })
}

func envOptions(getenv func(string) string) Options {
	var o Options
	if n, err := strconv.Atoi(getenv("METALAB_CUDA_DEVICE")); err == nil && n >= 0 {
		o.Device = n
	}
	if v, err := strconv.ParseBool(getenv("METALAB_CUDA_RACECHECK")); err == nil {
		o.Racecheck = v
	}
	return o
}
