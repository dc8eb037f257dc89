package main

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"metalab/backend"
	"metalab/backend/all"
	"metalab/backend/fake"
	"metalab/internal/cli"
	"metalab/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite cmp targets in scripts")

func TestMain(m *testing.M) {
	// Scripts may run kernels on the fake backend (--backend fake), whose
	// markers plant outputs and timings.
	all.Register("fake", func() backend.Backend { return fake.New() })
	testscript.Main(m, map[string]func(){
		"metalab": func() { os.Exit(int(cli.Main())) },
	})
}

// TestScripts runs testdata/script/*.txtar. Besides testscript's own
// conditions, scripts may use [cxx]: a C++ compiler for the cpu backend
// ($CXX, else g++) is present. Under CI (testenv.InCI) a missing compiler
// makes [cxx] an error, so `[!cxx] skip` fails instead of skipping.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(e *testscript.Env) error {
			// The scripts' metalab uses the compiler [cxx] found.
			if cxx := os.Getenv("CXX"); cxx != "" {
				e.Setenv("CXX", cxx)
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "cxx" {
				return testenv.HaveCXX()
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}
