package cuda

import (
	"os"
	"strconv"

	"metalab/backend"
)

// init registers the cuda backend in package backend's package-level
// registry, for the callers that have not moved to package all
// (metalab/backend/all), which lists the backends itself.
func init() {
	backend.Register("cuda", func() backend.Backend { return New(EnvOptions(os.Getenv)) })
}

// EnvOptions are default Options but for what the environment (getenv)
// asks: METALAB_CUDA_DEVICE (a device index), METALAB_CUDA_RACECHECK
// (true: run under compute-sanitizer's racecheck) and METALAB_CUDA_RUNNERS
// (the runner processes kept alive, Options.Runners).
func EnvOptions(getenv func(string) string) Options {
	var o Options
	if n, err := strconv.Atoi(getenv("METALAB_CUDA_DEVICE")); err == nil && n >= 0 {
		o.Device = n
	}
	if v, err := strconv.ParseBool(getenv("METALAB_CUDA_RACECHECK")); err == nil {
		o.Racecheck = v
	}
	if n, err := strconv.Atoi(getenv("METALAB_CUDA_RUNNERS")); err == nil && n > 0 {
		o.Runners = n
	}
	return o
}
