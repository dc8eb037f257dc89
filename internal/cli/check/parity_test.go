package check

import (
	"testing"

	checkpkg "metalab/check"
	"metalab/internal/cli/cmdutil/cmdtest"
)

// TestParityFlag: --parity is bitwise by default, takes ulp=N and rel=X,
// and a bad rule is a usage error that says where it goes wrong.
func TestParityFlag(t *testing.T) {
	got := cmdtest.ParseArgs(t, NewCmdCheck, []string{"k.yaml"}, "")
	if !got.Parity.Bitwise() {
		t.Errorf("default parity %v, want bitwise", got.Parity)
	}
	for arg, want := range map[string]checkpkg.Parity{
		"bitwise": {}, "ulp=4": {Mode: checkpkg.ParityULP, ULP: 4}, "rel=1e-5": {Mode: checkpkg.ParityRel, Rel: 1e-5},
	} {
		got := cmdtest.ParseArgs(t, NewCmdCheck, []string{"k.yaml", "--parity", arg}, "")
		if got == nil || got.Parity != want {
			t.Errorf("--parity %s: %+v, want %+v", arg, got, want)
		}
	}
	for arg, msg := range map[string]string{
		"ulp=x":  `--parity: parity rule "ulp=x", column 5: "x" is not a count`,
		"rel=-1": `--parity: parity rule "rel=-1", column 5: -1: want a relative error from 0 to 1`,
		"near":   `--parity: parity rule "near", column 1: unknown rule "near"`,
	} {
		cmdtest.ParseArgs(t, NewCmdCheck, []string{"k.yaml", "--parity", arg}, msg)
	}
	// A usage error (exit status 2) with a suggestion.
	cmdtest.ParseArgs(t, NewCmdCheck, []string{"k.yaml", "--parity", "ulps=2"}, "did you mean ulp=2?")
}
