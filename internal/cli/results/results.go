// Package results implements `metalab results`: questions to a sweep's
// results store, and `metalab results merge`, which combines the stores
// of a sweep's shards.
package results

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
	"metalab/search"
	"metalab/search/store"
)

// ResultsOptions are the inputs of `metalab results`.
type ResultsOptions struct {
	IO    *cmdutil.IOStreams
	Store string // a sweep's directory or its results.db
	Query store.Query
	JSON  bool
}

// NewCmdResults returns the results command (with its merge
// subcommand); runF, if non-nil, replaces the run function.
func NewCmdResults(f *cmdutil.Factory, runF func(*ResultsOptions) error) *cobra.Command {
	opts := &ResultsOptions{IO: f.IOStreams}
	var stage string
	cmd := &cobra.Command{
		Use:   "results <sweep-dir|results.db> [flags]",
		Short: "Query a sweep's results store",
		Long: `Print the results a sweep recorded: variants, compiles, checks per case,
timing samples, summaries of paired measurements, controls (the baseline
timed against itself) and the rule's decisions, filtered by stage,
variant (sha256, a prefix of at least 6 digits, or name), case, phase,
backend, device and status. A sweep's store can be read while it runs.

--case takes a case's full name (quick/T=16,pos0=37) or any part of the
names the plan checked (pos0=30000 matches every case at that position).

--status is a compile or check status (ok, pass, fail-parity, ...), a
verdict (retain, reject, inconclusive), or for summaries and controls
clean or contaminated.`,
		Example: "  metalab results /tmp/sweep --stage check --case pos0=30000 --status pass   # which variants passed parity there\n" +
			"  metalab results /tmp/sweep --stage decision --json\n" +
			"  metalab results merge /tmp/sweep shard1 shard2 shard3",
		Args: cmdutil.ExactArgs(1, "<sweep-dir|results.db>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Store = args[0]
			opts.Query.Stage = store.Stage(stage)
			if stage != "" && !slices.Contains(store.Stages, opts.Query.Stage) {
				var names []string
				for _, s := range store.Stages {
					names = append(names, string(s))
				}
				return cmdutil.FlagErrorf("--stage %q: want one of %s", stage, strings.Join(names, ", "))
			}
			if opts.Query.Limit < 0 {
				return cmdutil.FlagErrorf("--limit %d: want 0 (no limit) or more", opts.Query.Limit)
			}
			if runF != nil {
				return runF(opts)
			}
			return resultsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&stage, "stage", "", "only results of `STAGE`: variant, compile, check (verification), confirm (confirmation and the check after timing), sample, summary, control, decision")
	fl.StringVar(&opts.Query.Variant, "variant", "", "only the variant `V` (sha256, prefix or name)")
	fl.StringVar(&opts.Query.Case, "case", "", "only the `CASE` (a full name, or a part naming checked cases)")
	fl.StringVar(&opts.Query.Phase, "phase", "", "only the `PHASE` (explore, confirm, confirmation-1, before, after, decide)")
	fl.StringVar(&opts.Query.Backend, "backend", "", "only the `BACKEND`")
	fl.StringVar(&opts.Query.Device, "device", "", "only the `DEVICE`")
	fl.StringVar(&opts.Query.Status, "status", "", "only results with `STATUS`")
	fl.IntVar(&opts.Query.Limit, "limit", 0, "at most `N` rows")
	fl.BoolVar(&opts.JSON, "json", false, "write JSON")
	cmd.AddCommand(NewCmdMerge(f, nil))
	return cmd
}

// output is the JSON of `metalab results`.
type output struct {
	Store    string      `json:"store"`
	Plan     string      `json:"plan_sha256"`
	Baseline string      `json:"baseline_sha256"`
	Cases    []string    `json:"cases,omitempty"` // the cases --case named
	Rows     []store.Row `json:"rows"`
}

func resultsRun(ctx context.Context, opts *ResultsOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	path := opts.Store
	st, err := openStore(path)
	if err != nil {
		return err
	}
	defer st.Close()
	out := output{Store: st.Path(), Plan: st.PlanHash(), Baseline: st.Baseline(), Rows: []store.Row{}}
	cases := []string{opts.Query.Case}
	if c := opts.Query.Case; c != "" {
		// The plan's cases: the timed ones (confirmed and timed) and the
		// verification's.
		var all []string
		if p, err := search.ParsePlan(st.PlanJSON()); err == nil {
			all = slices.Clone(p.Cases)
			for _, name := range p.Checked {
				if !slices.Contains(all, name) {
					all = append(all, name)
				}
			}
		}
		if all != nil && !slices.Contains(all, c) {
			cases = nil
			for _, name := range all {
				if strings.Contains(name, c) {
					cases = append(cases, name)
				}
			}
			if len(cases) == 0 {
				return cmdutil.FlagErrorf("--case %q names none of the plan's cases (%s)", c, strings.Join(all, "; "))
			}
			out.Cases = cases
		}
	}
	for _, c := range cases {
		q := opts.Query
		q.Case = c
		rows, err := st.Results(ctx, q)
		if err != nil {
			return err
		}
		out.Rows = append(out.Rows, rows...)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, out)
	}
	return writeText(opts.IO.Out, out)
}

// openStore opens a sweep directory's store or a store file.
func openStore(path string) (*store.Store, error) {
	sw, err := search.Open(path)
	if err == nil {
		st := sw.Store
		return st, nil
	}
	// A store whose directory lacks the rest (a merged .db) is still a
	// store to query.
	if st, serr := store.OpenExisting(storePath(path)); serr == nil {
		return st, nil
	}
	return nil, err
}

func storePath(path string) string {
	if strings.HasSuffix(path, ".db") {
		return path
	}
	return strings.TrimRight(path, "/") + "/" + search.StoreFile
}

// writeText writes rows as one table per stage.
func writeText(w io.Writer, out output) error {
	fmt.Fprintf(w, "store %s: plan %s, baseline %s\n", out.Store, short(out.Plan), short(out.Baseline))
	if len(out.Rows) == 0 {
		fmt.Fprintln(w, "no results")
		return nil
	}
	var stage store.Stage
	var tw *tabwriter.Writer
	flush := func() {
		if tw != nil {
			tw.Flush()
		}
	}
	for _, r := range out.Rows {
		if r.Stage != stage {
			flush()
			stage = r.Stage
			fmt.Fprintf(w, "\n%s\n", strings.ToUpper(string(stage)))
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, header[stage])
		}
		fmt.Fprintln(tw, line(r))
	}
	flush()
	return nil
}

var header = map[store.Stage]string{
	store.StageVariant:  "VARIANT\tSHA256\tREFS",
	store.StageCompile:  "VARIANT\tSTATUS\tTG BYTES\tMESSAGE",
	store.StageCheck:    "VARIANT\tCASE\tSTATUS\tFINDINGS\tMESSAGE",
	store.StageConfirm:  "VARIANT\tCASE\tWHEN\tSTATUS\tMESSAGE",
	store.StageSample:   "VARIANT\tCASE\tPHASE\tPAIR\tSIDE\tORDER\tNS\tCLOCK",
	store.StageSummary:  "VARIANT\tCASE\tPHASE\tPAIRS\tBEFORE\tAFTER\tCHANGE\tCI\tSTATUS",
	store.StageControl:  "CASE\tPHASE\tPAIRS\tBEFORE\tAFTER\tRATIO\tCI\tSTATUS",
	store.StageDecision: "VARIANT\tVERDICT\tREASONS",
}

func line(r store.Row) string {
	switch r.Stage {
	case store.StageVariant:
		return fmt.Sprintf("%s\t%s\t%s", r.Name, short(r.Variant), strings.Join(r.Refs, " "))
	case store.StageCompile:
		return fmt.Sprintf("%s\t%s\t%d\t%s", r.Name, r.Compile.Status, r.Compile.TGBytes, oneLine(r.Compile.Message))
	case store.StageCheck:
		return fmt.Sprintf("%s\t%s\t%s\t%d\t%s", r.Name, r.Case, r.Check.Status, r.Check.Findings, oneLine(r.Check.Message))
	case store.StageConfirm:
		when := "before timing"
		if r.Phase != "" {
			when = "after " + r.Phase
		}
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.Name, r.Case, when, r.Confirm.Status, oneLine(r.Confirm.Message))
	case store.StageSample:
		s := r.Sample
		return fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%d\t%d\t%s", r.Name, r.Case, r.Phase, s.Pair, s.Side, s.Order, s.NS, s.Clock)
	case store.StageSummary:
		s := r.Summary
		return fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%s\t%+.2f%%\t[%+.2f%%, %+.2f%%]\t%s", r.Name, r.Case, r.Phase, s.Pairs, ms(s.MedianA), ms(s.MedianB),
			100*(s.Ratio-1), 100*(s.CILow-1), 100*(s.CIHigh-1), r.Status)
	case store.StageControl:
		s := r.Summary
		return fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%.4f\t[%.4f, %.4f]\t%s", r.Case, r.Phase, s.Pairs, ms(s.MedianA), ms(s.MedianB), s.Ratio, s.CILow, s.CIHigh, r.Status)
	case store.StageDecision:
		return fmt.Sprintf("%s\t%s\t%s", r.Name, r.Decision.Verdict, oneLine(strings.Join(r.Decision.Reasons, "; ")))
	}
	return r.Name
}

func ms(ns float64) string { return fmt.Sprintf("%.3fms", ns/1e6) }

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
