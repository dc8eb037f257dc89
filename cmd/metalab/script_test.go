package main

import (
	"flag"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"metalab/internal/cli"
)

var update = flag.Bool("update", false, "rewrite cmp targets in scripts")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"metalab": func() { os.Exit(int(cli.Main())) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
	})
}
