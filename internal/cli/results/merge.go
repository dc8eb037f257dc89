package results

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
	"metalab/search"
	"metalab/search/store"
)

// MergeOptions are the inputs of `metalab results merge`.
type MergeOptions struct {
	IO      *cmdutil.IOStreams
	Dst     string
	Sources []string
	JSON    bool
}

// NewCmdMerge returns the merge command; runF, if non-nil, replaces the
// run function.
func NewCmdMerge(f *cmdutil.Factory, runF func(*MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "merge <dst> <src>... [flags]",
		Short: "Combine the results stores of a sweep's shards",
		Long: `Merge the stores of the shards of one sweep (metalab sweep --shard I/N) into
dst: a directory (created if need be; it also receives the plan, the
manifest, the snapshots and the logs, so that metalab report dst renders
the whole sweep) or a store file ending in .db. Sources are shard
directories or their results.db files.

Every source must hold the same plan and the same baseline: stores of
different plans or baselines are refused, and so are results that
disagree (a check that passed in one shard and failed in another); then
nothing is merged. Merging is idempotent: a result dst holds already is not
added again.`,
		Example: "  metalab results merge /tmp/sweep shard1 shard2 shard3 && metalab report /tmp/sweep",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return cmdutil.FlagErrorf("merge: want <dst> and at least one <src>, got %d argument(s)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dst, opts.Sources = args[0], args[1:]
			if runF != nil {
				return runF(opts)
			}
			return mergeRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	return cmd
}

func mergeRun(opts *MergeOptions) error {
	err := search.MergeDirs(opts.Dst, opts.Sources)
	var ce *store.ConflictError
	if errors.Is(err, store.ErrOtherPlan) || errors.Is(err, store.ErrOtherBaseline) || errors.As(err, &ce) {
		err = fmt.Errorf("nothing merged: %w", err)
	}
	if opts.JSON {
		out := map[string]any{"dst": opts.Dst, "sources": opts.Sources, "merged": err == nil}
		if err != nil {
			out["error"], out["kind"] = err.Error(), cmdutil.ErrorKind(err)
		}
		if werr := cmdutil.WriteJSON(opts.IO.Out, out); werr != nil {
			return werr
		}
		if err != nil {
			return &cmdutil.ReportedError{Err: err}
		}
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "merged %d stores into %s\n", len(opts.Sources), opts.Dst)
	return nil
}
