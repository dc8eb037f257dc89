// Package report implements `metalab report`: render a sweep's report
// again from its results store.
package report

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
	"metalab/search"
)

// ReportOptions are the inputs of `metalab report`.
type ReportOptions struct {
	IO   *cmdutil.IOStreams
	Dir  string
	Repo string
	JSON bool
}

// NewCmdReport returns the report command; runF, if non-nil, replaces
// the run function.
func NewCmdReport(f *cmdutil.Factory, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "report <sweep-dir> [flags]",
		Short: "Render a sweep's report again from its results store",
		Long: `Render report.md, report.json and the plots of the sweep in a directory
again, from its results store and plan alone (statistics are recomputed
from the stored pairs, so a store gives the same report every time), and
write the patch of each retained variant that has none: after merging
shards, or while a sweep runs elsewhere. Only files an earlier report
wrote are replaced.`,
		Example: "  metalab report /tmp/sweep",
		Args:    cmdutil.ExactArgs(1, "<sweep-dir>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(opts)
			}
			return reportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "verify new patches against the repository `DIR`")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	return cmd
}

func reportRun(ctx context.Context, opts *ReportOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := search.Rerender(ctx, opts.Dir, opts.Repo)
	if in == nil {
		return err
	}
	md := filepath.Join(opts.Dir, "report.md")
	if opts.JSON {
		out := map[string]any{"report": md, "json": filepath.Join(opts.Dir, "report.json"), "variants": len(in.Variants)}
		if err != nil {
			out["error"] = err.Error()
		}
		if werr := cmdutil.WriteJSON(opts.IO.Out, out); werr != nil {
			return werr
		}
		if err != nil {
			return &cmdutil.ReportedError{Err: err}
		}
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "report: %s (%d variants)\n", md, len(in.Variants))
	return err
}
