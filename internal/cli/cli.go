// Package cli is metalab's command line: the root command, the explicit
// list of subcommands and the one place errors become exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
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
variants from chosen site choices, and writes patches that git apply cleanly.

Every command takes --json; under it, a failure is one JSON object,
{"error": MESSAGE, "kind": KIND}, on standard output (on standard error
when the command had already written its result), with the same exit
status: 0 ok, 1 a failure or negative result (kind error or interrupted),
2 usage, 3 this machine cannot do it (environment), 4 sites in conflict
(conflict), 5 a site ref that names no listed site (site-ref).

Documentation, in the clone: README.md; docs/sweep.md for sweeps, their
output and the decision rule (the fields of a --rule file:
docs/sweep.md#the-decision-rule); docs/checking.md for what a check sees;
docs/CATALOGUE.md for what each mutation proves.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetIn(f.IOStreams.In)
	cmd.PersistentFlags().Var(inputfile.Flag{}, "max-input-size", "read sources, headers, specs, variants and patches of at most `SIZE` (bytes, or with K, M or G); only regular files are read")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cmdutil.FlagError{Err: &parseError{err}}
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
	stop := startProfiles()
	defer stop()
	f := cmdutil.New()
	return Run(f, nil)
}

// Run runs metalab with args (nil means the process's arguments) and maps
// the outcome to an exit code, printing any error once.
func Run(f *cmdutil.Factory, args []string) ExitCode {
	return run(f, args, NewCmdRoot)
}

// run is Run with the root command newRoot makes.
func run(f *cmdutil.Factory, args []string, newRoot func(*cmdutil.Factory) *cobra.Command) ExitCode {
	if f.Version == "" {
		f.Version = Version()
	}
	if args == nil {
		args = os.Args[1:]
	}
	// The commands write through out, which remembers whether they wrote
	// anything: a --json error goes to standard output only when it is
	// still empty.
	ios := *f.IOStreams
	out := &countingWriter{w: ios.Out}
	ios.Out = out
	fc := *f
	fc.IOStreams = &ios
	inputfile.SetLimit(inputfile.DefaultLimit) // --max-input-size sets it for this run
	root := newRoot(&fc)
	root.SetArgs(args)
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
	errOut := ios.ErrOut
	var flagErr *cmdutil.FlagError
	var list msl.ErrorList
	var reported *cmdutil.ReportedError
	code := classify(err)
	unknownCmd := strings.HasPrefix(err.Error(), "unknown command ")
	if unknownCmd {
		code = ExitUsage
		err = &cmdutil.FlagError{Err: err}
	}
	switch {
	case errors.As(err, &reported) || errors.Is(err, cmdutil.ErrSilent):
		// Reported already.
	case wantJSON(cmd, args, err):
		// One JSON object, as sweep writes it: on standard output unless
		// the command has written its result there already.
		w := ios.Out
		if out.n > 0 {
			w = errOut
		}
		if werr := cmdutil.WriteJSON(w, cmdutil.ErrorJSON{Error: err.Error(), Kind: cmdutil.ErrorKind(err)}); werr != nil {
			fmt.Fprintf(errOut, "metalab: %v\n", err)
		}
	case errors.As(err, &flagErr):
		fmt.Fprintf(errOut, "metalab: %v\n", err)
		name := "metalab"
		if cmd != nil && cmd != root {
			name = cmd.CommandPath()
		}
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", name)
	case errors.As(err, &list):
		// One error a line, the first msl.MaxShown of them.
		fmt.Fprintln(errOut, list.Error())
	default:
		fmt.Fprintf(errOut, "metalab: %v\n", err)
	}
	return code
}

// A parseError is an error of cobra's flag parsing: the flags after the
// bad one were not parsed.
type parseError struct{ err error }

func (e *parseError) Error() string { return e.err.Error() }
func (e *parseError) Unwrap() error { return e.err }

// wantJSON reports whether the failed command cmd was asked for --json.
// When the flags parsed, that is its --json flag; when they did not (a bad
// flag, an unknown command), args are looked at: a --json or --json=BOOL
// before any "--".
func wantJSON(cmd *cobra.Command, args []string, err error) bool {
	var pe *parseError
	if cmd != nil && !errors.As(err, &pe) && !strings.HasPrefix(err.Error(), "unknown command ") {
		if fl := cmd.Flags().Lookup("json"); fl != nil {
			return fl.Value.String() == "true"
		}
		return false
	}
	want := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			want = true
		} else if v, ok := strings.CutPrefix(a, "--json="); ok {
			b, perr := strconv.ParseBool(v)
			want = perr == nil && b
		}
	}
	return want
}

// A countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
