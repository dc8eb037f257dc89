// Package cmdtest helps test the argument handling of commands built on
// cmdutil: each command's NewCmd takes a run function, so a test can run
// the real flag parsing and validation and capture the options instead of
// running the command.
package cmdtest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
)

// ParseArgs builds the command with newCmd, executes it on args with a run
// function that only records the options, and returns them. When wantErr is
// not empty the command must fail with a *cmdutil.FlagError (a usage error,
// exit 2) whose message contains wantErr, and ParseArgs returns nil.
func ParseArgs[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args []string, wantErr string) *O {
	t.Helper()
	ios, _, _, _ := cmdutil.Test()
	var got *O
	cmd := newCmd(&cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}, func(o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	err := cmd.Execute()
	if wantErr != "" {
		var fe *cmdutil.FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error = %v, want FlagError containing %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("the command did not reach its run function")
	}
	return got
}
