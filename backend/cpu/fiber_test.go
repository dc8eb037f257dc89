package cpu

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/testenv"
)

// TestFiberSwitch builds testdata/fiber/fibertest.cpp against the runner's
// fiber code, with the assembly switch and with the portable fallback, and
// runs it: registers, rounding modes and stack alignment must survive
// thousands of switches between 16 fibers.
func TestFiberSwitch(t *testing.T) {
	cxx := testenv.RequireCXX(t)
	for _, variant := range []struct{ name, def string }{{"native", ""}, {"portable", "-DMTL_FIBER_PORTABLE"}} {
		t.Run(variant.name, func(t *testing.T) {
			exe := filepath.Join(t.TempDir(), "fibertest")
			args := []string{"-std=c++17", "-O2", "-Iruntime"}
			if variant.def != "" {
				args = append(args, variant.def)
			}
			args = append(args, "-o", exe, "testdata/fiber/fibertest.cpp", "runtime/fiber.cpp", "runtime/fiber_x86_64.S", "runtime/fiber_arm64.S")
			if out, err := testenv.Command(cxx, args...).CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			out, err := exec.Command(exe).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "ok ") {
				t.Fatalf("fibertest: %v\n%s", err, out)
			}
			t.Logf("%s", strings.TrimSpace(string(out)))
		})
	}
}
