// Package cli is metalab's command line: the root command, the explicit
// list of subcommands and the one place errors become exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"metalab/backend"
	"metalab/internal/cli/backends"
	checkcmd "metalab/internal/cli/check"
	"metalab/internal/cli/cmdutil"
	diffcmd "metalab/internal/cli/diff"
	mutatecmd "metalab/internal/cli/mutate"
	reportcmd "metalab/internal/cli/report"
	resultscmd "metalab/internal/cli/results"
	runcmd "metalab/internal/cli/run"
	"metalab/internal/cli/sites"
	sweepcmd "metalab/internal/cli/sweep"
	"metalab/internal/cli/tgmem"
	"metalab/internal/inputfile"
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
	ExitEnv      ExitCode = 3 // this machine cannot do it: no compiler, a full disk, an unwritable cache
	ExitConflict ExitCode = 4 // the chosen sites cannot be applied together: an infeasible combination
	ExitRef      ExitCode = 5 // a site ref does not name a site of the source as listed: stale, unknown, or listed under other -D/-U
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
	cmd.PersistentFlags().Var(inputfile.Flag{}, "max-input-size", "read sources, headers, specs, variants and patches of at most `SIZE` (bytes, or with K, M or G); only regular files are read")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cmdutil.FlagError{Err: err}
	})
	cmd.AddCommand(
		sites.NewCmdSites(f, nil),
		tgmem.NewCmdTgmem(f, nil),
		mutatecmd.NewCmdMutate(f, nil),
		diffcmd.NewCmdDiff(f, nil),
		checkcmd.NewCmdCheck(f, nil),
		runcmd.NewCmdRun(f, nil),
		sweepcmd.NewCmdSweep(f, nil),
		resultscmd.NewCmdResults(f, nil),
		reportcmd.NewCmdReport(f, nil),
		backends.NewCmdBackends(f, nil),
		newCmdVersion(f),
	)
	for _, c := range cmd.Commands() {
		addCompletions(c)
	}
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
	if f.Version == "" {
		f.Version = Version()
	}
	inputfile.SetLimit(inputfile.DefaultLimit) // --max-input-size sets it for this run
	root := NewCmdRoot(f)
	if args != nil {
		root.SetArgs(args)
	}
	// Ctrl-C and SIGTERM cancel the command's context: commands stop what
	// runs (runners included) and report what finished.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal the default handling is back: a second
	// Ctrl-C ends the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	errOut := f.IOStreams.ErrOut
	var flagErr *cmdutil.FlagError
	var list msl.ErrorList
	var reported *cmdutil.ReportedError
	code := classify(err)
	switch {
	case errors.As(err, &reported) || errors.Is(err, cmdutil.ErrSilent):
		// Reported already.
	case errors.As(err, &flagErr) || strings.HasPrefix(err.Error(), "unknown command "):
		fmt.Fprintf(errOut, "metalab: %v\n", err)
		name := "metalab"
		if cmd != nil && cmd != root {
			name = cmd.CommandPath()
		}
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", name)
		code = ExitUsage
	case errors.As(err, &list):
		// One error a line, the first msl.MaxShown of them.
		fmt.Fprintln(errOut, list.Error())
	default:
		fmt.Fprintf(errOut, "metalab: %v\n", err)
	}
	return code
}

// classify maps an error to its exit status: usage errors 2, what this
// machine cannot do 3, anything else (a failure, a negative result) 1.
func classify(err error) ExitCode {
	var flagErr *cmdutil.FlagError
	var envErr *backend.EnvError
	var conflict *variants.ConflictError
	var refErr mutate.RefError
	switch {
	case errors.As(err, &flagErr):
		return ExitUsage
	case errors.As(err, &envErr) || cmdutil.OutOfSpace(err):
		return ExitEnv
	case errors.As(err, &conflict):
		return ExitConflict
	case errors.As(err, &refErr):
		return ExitRef
	}
	return ExitError
}
