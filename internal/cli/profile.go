package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// profileEnv names a directory that a run of metalab writes its Go
// profiles into: cpu.pprof, and block.pprof and mutex.pprof (where its
// goroutines waited: for a backend's lock, a device turn, a runner's
// reply). For finding where a sweep's time goes (go tool pprof).
const profileEnv = "METALAB_PROFILE"

// startProfiles starts the profiles profileEnv asks for and returns what
// writes them; it says why on stderr and profiles nothing when it cannot.
func startProfiles() (stop func()) {
	dir := os.Getenv(profileEnv)
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "metalab: %s: %v\n", profileEnv, err)
		return func() {}
	}
	cpu, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err == nil {
		err = pprof.StartCPUProfile(cpu)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "metalab: %s: %v\n", profileEnv, err)
		return func() {}
	}
	// Every blocking event over 100 µs, and every contended lock.
	runtime.SetBlockProfileRate(100_000)
	runtime.SetMutexProfileFraction(1)
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		for _, name := range []string{"block", "mutex"} {
			f, err := os.Create(filepath.Join(dir, name+".pprof"))
			if err == nil {
				err = pprof.Lookup(name).WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "metalab: %s: %v\n", profileEnv, err)
			}
		}
	}
}
