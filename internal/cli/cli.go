// Package cli is metalab's command line: the root command, the explicit
// list of subcommands and the one place errors become exit codes.
package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"metalab/internal/cli/backends"
	checkcmd "metalab/internal/cli/check"
	"metalab/internal/cli/cmdutil"
	diffcmd "metalab/internal/cli/diff"
	mutatecmd "metalab/internal/cli/mutate"
	"metalab/internal/cli/sites"
	"metalab/internal/cli/tgmem"
	"metalab/msl"
	"metalab/mutate"
	"metalab/variants"
)

// An ExitCode is the process exit status.
type ExitCode int

// Exit statuses.
const (
	ExitOK       ExitCode = 0 // success
	ExitError    ExitCode = 1 // failure, or a negative result
	ExitUsage    ExitCode = 2 // bad flags or arguments
	ExitConflict ExitCode = 3 // the chosen sites cannot be applied together: an infeasible combination
	ExitRef      ExitCode = 4 // a site ref does not name a site of the source as listed: stale, unknown, or listed under other -D/-U
)

// NewCmdRoot returns the root command with every subcommand. Adding a
// command is one line in the list below.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "metalab <command> [flags]",
		Short: "Make Metal compute kernels faster without breaking them",
		Long: `metalab finds mutation sites in a Metal kernel function, builds named
variants from chosen site choices, and writes patches that git apply cleanly.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetIn(f.IOStreams.In)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cmdutil.FlagError{Err: err}
	})
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.AddCommand(
		sites.NewCmdSites(f, nil),
		tgmem.NewCmdTgmem(f, nil),
		mutatecmd.NewCmdMutate(f, nil),
		diffcmd.NewCmdDiff(f, nil),
		checkcmd.NewCmdCheck(f, nil),
		backends.NewCmdBackends(f, nil),
	)
	return cmd
}

// Main runs metalab with the process's arguments and streams.
func Main() ExitCode {
	f := cmdutil.New()
	return Run(f, nil)
}

// Run runs metalab with args (nil means the process's arguments) and maps
// the outcome to an exit code, printing any error once.
func Run(f *cmdutil.Factory, args []string) ExitCode {
	root := NewCmdRoot(f)
	if args != nil {
		root.SetArgs(args)
	}
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	errOut := f.IOStreams.ErrOut
	var flagErr *cmdutil.FlagError
	var list msl.ErrorList
	var conflict *variants.ConflictError
	var refErr mutate.RefError
	switch {
	case errors.Is(err, cmdutil.ErrSilent):
		return ExitError
	case errors.As(err, &flagErr) || strings.HasPrefix(err.Error(), "unknown command "):
		fmt.Fprintf(errOut, "metalab: %v\n", err)
		name := "metalab"
		if cmd != nil && cmd != root {
			name = cmd.CommandPath()
		}
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", name)
		return ExitUsage
	case errors.As(err, &conflict):
		fmt.Fprintf(errOut, "metalab: %v\n", err)
		return ExitConflict
	case errors.As(err, &refErr):
		fmt.Fprintf(errOut, "metalab: %v\n", err)
		return ExitRef
	case errors.As(err, &list):
		// One error a line, the first msl.MaxShown of them.
		fmt.Fprintln(errOut, list.Error())
		return ExitError
	default:
		fmt.Fprintf(errOut, "metalab: %v\n", err)
		return ExitError
	}
}
