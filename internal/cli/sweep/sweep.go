// Package sweep implements `metalab sweep`: the whole loop of the
// hand-written reports as one command (see package search).
package sweep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"metalab/backend"
	checkpkg "metalab/check"
	"metalab/internal/cli/check"
	"metalab/internal/cli/cmdutil"
	"metalab/measure"
	"metalab/mutate/all"
	"metalab/search"
	"metalab/spec"
)

// SweepOptions are the inputs of `metalab sweep`.
type SweepOptions struct {
	IO       *cmdutil.IOStreams
	ReadFile func(string) ([]byte, error)
	// NewBackend returns the backend called name; nil means the built-in
	// backends.
	NewBackend func(ctx context.Context, name string) (backend.Backend, error)
	// CompileTimeout bounds one compile (--compile-timeout).
	CompileTimeout time.Duration
	Version        string
	// Terminal forces progress bars on (true) or off (false); nil means
	// bars when standard error is a terminal.
	Terminal *bool

	Spec      string // "" with Resume: the plan in Out says
	Functions []string
	Macros    cmdutil.Macros
	Backend   string
	Strategy  string
	Ops       []string
	Choices   string
	Refs      []string
	Seed      uint64
	Beam      int
	MinStep   float64
	Budget    search.Budget
	Cases     []string
	CheckSets []string
	Target    string
	Explore   string
	Phases    struct{ Explore, Confirm search.Phase }
	TGLimit   int
	NoDetect  bool
	// NoVerify turns verification off; VerifyBackend names the
	// verification backend of a timing backend without a checking mode
	// (VerifyBackendSet: given on the command line); VerifySets its sets.
	NoVerify         bool
	VerifyBackend    string
	VerifyBackendSet bool
	VerifySets       []string
	// HeldOut is --held-out: held-out cases per variant's verification;
	// -1 (the default) means search.DefaultHeldOut when the spec declares
	// domains, 0 none.
	HeldOut int
	Race    bool
	Strict  bool
	Rule    measure.Rule
	Path    string
	Repo    string
	Out     string
	Resume  bool
	Shard   search.Shard
	JSON    bool
	// Jobs is --jobs, the pool that checks variants ahead of the timing
	// (default every core); Pause is --pause-during-samples: "auto" (on
	// for the cpu timing backend, off otherwise), "on" or "off".
	Jobs  int
	Pause string
	// Variants are --variant: hand-written variant files, or directories
	// of them (their *.metal files).
	Variants []string
	// Scope is --scope: "fn" (patches change the owned functions only)
	// or "file" (anywhere in the kernel's file).
	Scope string
	// Parity is --parity: bitwise (the default) or an opt-in tolerance.
	Parity checkpkg.Parity
	// Strategies are --strategy's names: at most one over edits
	// (Strategy) and one over the tunable parameters (Tune).
	Strategies []string
	Tune       string
	// Samples is --samples, the points random draws; Point is --point,
	// the point edits and hand-written variants run at.
	Samples int
	Point   string
	// Screen is the contamination screen (--max-noise, --no-screen); nil
	// the default.
	Screen *measure.Screen
}

// NewCmdSweep returns the sweep command; runF, if non-nil, replaces the
// run function (tests capture the parsed options with it).
func NewCmdSweep(f *cmdutil.Factory, runF func(*SweepOptions) error) *cobra.Command {
	opts := &SweepOptions{IO: f.IOStreams, ReadFile: f.ReadFile, Version: f.Version}
	var (
		budget, shard, tgLimit, ruleFile string
		parity, maxNoise                 string
		noScreen                         bool
		minGain, maxRegression, minStep  string
		confirmations                    string
		explorePairs, confirmPairs, top  int
		warmup, dispatches               int
	)
	cmd := &cobra.Command{
		Use:   "sweep <spec.yaml> --fn NAME [flags]",
		Short: "Search a kernel function's variants, check, time and decide them, and write patches",
		Long: `Sweep the function you own (--fn) in a kernel spec's source: find the sites
of the operators (--ops), build variants by a strategy, and for each one,
cheapest first, stopping at the first stage it fails:

  static threadgroup memory (from the source), compile and threadgroup
  memory (compiled); verification: bitwise parity in the checking mode
  (races, uninitialised reads, bounds) on the verification cases
  (--verify-cases, default the spec's default sets), on the cpu backend
  when the timing backend has no checking mode (cuda, metal:
  --verify-backend); confirmation: bitwise parity of the build that is
  timed, on the timing backend, at every timed case; then a few paired
  A/B timings at the explore case. A variant is timed only when both
  parts pass, and after every measurement the outputs of its last timed
  sample are read back and compared with the baseline's
  (fail-after-timing). --no-verify confirms only, and every result says
  "not verified". A variant made only of operators that claim to keep
  outputs (all but drop-barrier) that fails is proof-violated: a bug in
  metalab, counted apart.

Hand-written variants (--variant FILE, or a directory of .metal files,
repeatable) go through the same stages, first, named file.<name>-<sha256>
and recorded in the plan with their sha256 (a file changed since is an
error on resume); without --ops or --refs only they are swept (--ops all
adds every operator's). One that changes code outside --fn is shown as
such, and its patch is refused unless --scope file allows it.

A spec's tune: section makes its parameters (NSG, TILE, ...) a search
too: a point is a source (the baseline's, a hand-written variant's, an
edit variant's that passed) at parameter values, checked under the spec at that
point against the baseline at the defaults, its threadgroup memory judged
at the point (a point over --tg-limit is not compiled), named
<name>@NSG=2. A retained point's patch edits the kernel's #define of each
parameter a define carries; every other parameter, and the threads and
threadgroups the point changes, is a host-side note (the summary, the
report, the patch's header and patches/<name>.host.txt). --point NSG=2
runs the edits and hand-written variants at a point of your choosing.

Variants are compared bitwise. --parity ulp=N (or rel=X) opts in to a
tolerance for changes that reorder arithmetic; every row, report, JSON
result and patch of a variant it passes without bitwise identity then
says "not bitwise" and by how much.

The fastest few explored variants (--confirm-top) are then timed at every
case with more pairs, and twice more at the target case, between two
controls (the baseline timed against itself), and the decision rule
retains, rejects or finds them inconclusive. Each retained variant gets a
patch, verified with git apply --check (against --repo when given, whose
--path must hold the baseline: checked before any work, exit 2 if not).
When measurements are contaminated and their samples are shorter than a
millisecond, the summary suggests the --dispatches that would time them;
--max-noise and --no-screen set the contamination screen.

Strategies (--strategy, one over edits and one over parameters, e.g.
ablate,grid): over edits, ablate (each atom alone: one choice of one
site), stack (cumulative, in source order or the order of --refs; an atom
that fails is left out of later steps), loo (a set, then the set without
each atom), greedy (forward selection) and beam (forward selection
keeping --beam sets); over the spec's tunable parameters, grid (every
point its restrictions allow) and random (--samples of them). --strategy
grid alone sweeps the parameters without any edit. They are
deterministic given --seed; budgets bound the variants built (of every
kind), the device time of the timed samples and the wall time.

Everything is declared up front in a plan (plan.json: the baseline's and
the spec's sha256, cases, pairs, the rule and the search settings) whose
hash keys every result in the results store (results.db), written as each
result arrives. An interrupted sweep (Ctrl-C, kill -9, power loss) goes
on with --resume, redoing nothing that finished (from any directory: the
plan's relative paths are found where the sweep began); a directory of
another plan is refused. --shard I/N runs a deterministic slice of a
sweep whose strategies are ablate, loo, grid or random; metalab results
merge combines the shards' stores.

A pool of --jobs workers (default: every core) compiles (both builds,
both backends), verifies and confirms the variants to come while the
current one is timed; timing stays one measurement at a time, in the
strategy's order, so the store, the report and the verdicts are those of
--jobs 1. The pool's runs on a GPU wait while a sample is timed;
--pause-during-samples on makes its compiles wait too (auto: on for the
cpu timing backend, whose samples share the host's cores).

--out receives the plan, manifest.json (every source's sha256, metalab's
version, backend, device, compiler), variant snapshots, a log per variant,
report.md, report.json, SVG plots and the patches. Timings on the cpu
backend are emulator timings: they exercise the loop, not a GPU.

The exit status is 0 when a variant was retained, 1 when none was (or
the baseline failed its own check, or the sweep was interrupted), 2 for
usage errors and 3 when this machine cannot run the backend or the
verification backend (no C++ compiler for cpu), before any work.`,
		Example: "  metalab sweep kernels/qsa_prompt.yaml --fn qsa_flash --cases quick --strategy ablate \\\n" +
			"      --ops unroll-pragma,unroll --budget variants=12 --out /tmp/sweep\n" +
			"  metalab sweep --resume --out /tmp/sweep\n" +
			"  metalab sweep kernels/examples/tune/scale4.yaml --fn scale4 --strategy grid \\\n" +
			"      --variant kernels/examples/tune/variants --out /tmp/tune\n" +
			"  metalab sweep kernels/qsa_prompt.yaml --fn qsa_flash --cases full --shard 2/4 --out /scratch/shard2",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 || len(args) == 0 && !opts.Resume {
				return cmdutil.FlagErrorf("sweep: want one argument <spec.yaml> (or --resume --out DIR alone), got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Spec = args[0]
			}
			opts.VerifyBackendSet = cmd.Flags().Changed("verify-backend")
			if err := parseFlags(cmd, opts, flagValues{budget, shard, tgLimit, ruleFile, minGain, maxRegression, minStep,
				confirmations, explorePairs, confirmPairs, top, warmup, dispatches}); err != nil {
				return err
			}
			p, err := checkpkg.ParseParity(parity)
			if err != nil {
				return cmdutil.FlagErrorf("--parity: %v", err)
			}
			opts.Parity = p
			if noScreen || maxNoise != "" {
				if noScreen && maxNoise != "" {
					return cmdutil.FlagErrorf("--no-screen turns the screen off: --max-noise would not be used")
				}
				opts.Screen = &measure.Screen{Off: noScreen}
				if maxNoise != "" {
					if opts.Screen.MaxNoise, err = parsePct(maxNoise); err != nil || opts.Screen.MaxNoise == 0 {
						return cmdutil.FlagErrorf("--max-noise %q: want a percentage above 0%%, such as 10%%", maxNoise)
					}
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return sweepRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Functions, "fn", nil, "the owned function `NAME` (repeatable): only it is mutated and its stages timed")
	cmdutil.AddMacroFlags(fl, &opts.Macros.Defines, &opts.Macros.Undefs, &opts.Macros.IncludeDirs)
	cmdutil.AddCompileTimeoutFlag(fl, &opts.CompileTimeout)
	fl.StringVar(&opts.Backend, "backend", "cpu", "backend `NAME`: cpu, cuda, metal, or auto")
	fl.StringSliceVar(&opts.Strategies, "strategy", []string{"ablate"}, "search `STRATEGY`: one over edits ("+search.StrategyNames(search.OverEdits)+") and/or one over the spec's tunable parameters ("+search.StrategyNames(search.OverParams)+"), e.g. ablate,grid")
	fl.IntVar(&opts.Samples, "samples", 8, "`N` points the random strategy draws")
	fl.StringVar(&opts.Point, "point", "", "the tunable parameters' `POINT` (NSG=4 TILE=64) the edits and hand-written variants run at (default: the spec's defaults)")
	fl.StringSliceVar(&opts.Ops, "ops", nil, "operators `OP,...` whose sites are searched (default: every operator)")
	fl.StringVar(&opts.Choices, "choices", "all", "`all` choices of every site, or each site's `first`")
	fl.StringSliceVar(&opts.Refs, "refs", nil, "site refs `ID=CHOICE,...`: the stack's order, the loo set, or the only atoms searched")
	fl.Uint64Var(&opts.Seed, "seed", 1, "`SEED` of the search order and of the bootstrap intervals")
	fl.IntVar(&opts.Beam, "beam", 3, "beam `WIDTH` (beam only)")
	fl.StringVar(&minStep, "min-step", "1%", "greedy and beam stop when a step is not this much `FASTER` at the explore case")
	fl.StringVar(&budget, "budget", "", "budgets `variants=N,device=DUR,wall=DUR` (default none)")
	fl.StringSliceVar(&opts.Cases, "cases", nil, "case `SET`s checked and timed (default: the spec's defaults)")
	fl.StringSliceVar(&opts.CheckSets, "check-cases", nil, "more case `SET`s checked for parity but not timed")
	fl.StringVar(&opts.Target, "target", "", "the `CASE` the rule seeks the gain at: set/name or a part naming one case (default: the last timed case)")
	fl.StringVar(&opts.Explore, "explore-case", "", "the `CASE` exploration times at (default: the target)")
	fl.IntVar(&explorePairs, "explore-pairs", search.DefaultExplore.Pairs, "alternating A/B `PAIRS` per exploration measurement")
	fl.IntVar(&confirmPairs, "confirm-pairs", 0, "`PAIRS` per confirmation measurement (default: the rule's min_pairs)")
	fl.IntVar(&top, "confirm-top", search.DefaultConfirm.Top, "confirm the `N` fastest explored variants")
	fl.IntVar(&warmup, "warmup", 1, "warm-up `SAMPLES` per side before each measurement")
	fl.IntVar(&dispatches, "dispatches", 0, "`N` dispatches submitted together per timing sample (default: the spec's dispatches:, else 1)")
	fl.StringVar(&tgLimit, "tg-limit", "16KiB", "static threadgroup memory `LIMIT`")
	fl.BoolVar(&opts.NoDetect, "no-detect", false, "the older name of --no-verify")
	fl.BoolVar(&opts.NoVerify, "no-verify", false, "do not verify variants in the checking mode: confirm them on the timing backend only (every result says \"not verified\")")
	fl.StringVar(&opts.VerifyBackend, "verify-backend", "cpu", "the `BACKEND` whose checking mode verifies variants when the timing backend has none (cuda, metal)")
	fl.StringSliceVar(&opts.VerifySets, "verify-cases", nil, "case `SET`s variants are verified at (default: the spec's defaults)")
	fl.IntVar(&opts.HeldOut, "held-out", -1, "held-out `N` cases drawn from the spec's domains in each variant's verification (default 4 when the spec declares domains; 0 turns them off)")
	fl.BoolVar(&opts.Race, "race", false, "also check under several thread orders")
	fl.BoolVar(&opts.Strict, "strict", false, "fail on warnings too (lanes relying on lockstep)")
	fl.StringVar(&ruleFile, "rule", "", "the decision rule as a JSON `FILE` (measure.Rule; default: bitwise, 3% gain at the target, no regression beyond 1%, two confirmations)")
	fl.StringVar(&minGain, "min-gain", "", "the rule's median gain `PCT` at the target (default 3%)")
	fl.StringVar(&maxRegression, "max-regression", "", "the rule's tolerated slowdown `PCT` at other cases (default 1%)")
	fl.StringVar(&confirmations, "confirmations", "", "the rule's independent confirmation `RUNS` (default 2)")
	fl.StringVar(&opts.Path, "path", "", "the kernel's `PATH` in its repository, for patches (default: the spec's source path)")
	fl.StringVar(&opts.Repo, "repo", "", "verify patches against the repository `DIR` (its --path must have the baseline's sha256)")
	fl.StringVar(&opts.Out, "out", "", "output `DIR` (default: metalab-sweep-<fn>-<plan hash>)")
	fl.BoolVar(&opts.Resume, "resume", false, "continue the sweep in --out, redoing nothing that finished")
	fl.StringVar(&shard, "shard", "", "run shard `I/N` of an ablate or loo sweep")
	fl.BoolVar(&opts.JSON, "json", false, "write the result (or an error) as JSON")
	fl.IntVar(&opts.Jobs, "jobs", runtime.NumCPU(), "check `N` variants at once ahead of the timing (compile on both backends, verification, confirmation); 1: one variant at a time; the results are the same")
	fl.StringVar(&opts.Pause, "pause-during-samples", "auto", "`WHEN` the pool waits while a sample is timed: on, off, or auto (on for the cpu timing backend, whose samples share the host's cores; off for a GPU)")
	fl.StringArrayVar(&opts.Variants, "variant", nil, "a hand-written variant `FILE` of the kernel, or a directory of them (its *.metal files; repeatable): swept like the generated ones; without --ops or --refs, only they are")
	fl.StringVar(&parity, "parity", "bitwise", "the parity `RULE` variants are judged by: bitwise (the default), or opt in to a tolerance for changes that reorder arithmetic, ulp=N or rel=X (every result, report and patch so judged says \"not bitwise\" and by how much)")
	fl.StringVar(&maxNoise, "max-noise", "", "the contamination screen's noise `PCT` above which a measurement is contaminated (default 5%)")
	fl.BoolVar(&noScreen, "no-screen", false, "turn the contamination screen off: no measurement is contaminated (for emulator timings on a busy machine; every report shows the plan's screen)")
	fl.StringVar(&opts.Scope, "scope", "fn", "what a patch may change: `fn` (the owned functions only) or file (anywhere in the kernel's file: a hand-written variant's change outside --fn)")
	return cmd
}

type flagValues struct {
	budget, shard, tgLimit, ruleFile, minGain, maxRegression, minStep, confirmations string
	explorePairs, confirmPairs, top, warmup, dispatches                              int
}

// parseFlags turns the flags that need parsing into options.
func parseFlags(cmd *cobra.Command, o *SweepOptions, v flagValues) error {
	var err error
	if o.Budget, err = search.ParseBudget(v.budget); err != nil {
		return cmdutil.FlagErrorf("--budget: %v", err)
	}
	if v.shard != "" {
		if o.Shard, err = search.ParseShard(v.shard); err != nil {
			return cmdutil.FlagErrorf("--shard: %v", err)
		}
	}
	if o.TGLimit, err = check.ParseSize(v.tgLimit); err != nil {
		return cmdutil.FlagErrorf("--tg-limit: %v", err)
	}
	if o.MinStep, err = parsePct(v.minStep); err != nil {
		return cmdutil.FlagErrorf("--min-step: %v", err)
	}
	o.Rule = measure.DefaultRule()
	if v.ruleFile != "" {
		b, err := o.ReadFile(v.ruleFile)
		if err != nil {
			return cmdutil.FlagErrorf("--rule: %v", err)
		}
		if o.Rule, err = measure.ParseRule(b); err != nil {
			return cmdutil.FlagErrorf("--rule %s: %v", v.ruleFile, err)
		}
	}
	if v.minGain != "" {
		if o.Rule.MinGain, err = parsePct(v.minGain); err != nil {
			return cmdutil.FlagErrorf("--min-gain: %v", err)
		}
	}
	if v.maxRegression != "" {
		if o.Rule.MaxRegression, err = parsePct(v.maxRegression); err != nil {
			return cmdutil.FlagErrorf("--max-regression: %v", err)
		}
	}
	if v.confirmations != "" {
		n, err := strconv.Atoi(v.confirmations)
		if err != nil || n < 0 {
			return cmdutil.FlagErrorf("--confirmations %q: want a count", v.confirmations)
		}
		o.Rule.Confirmations = n
	}
	if err := o.Rule.Validate(); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	o.Phases.Explore = search.DefaultExplore
	o.Phases.Confirm = search.DefaultConfirm
	o.Phases.Explore.Pairs = v.explorePairs
	o.Phases.Confirm.Pairs = o.Rule.MinPairs
	if v.confirmPairs > 0 {
		o.Phases.Confirm.Pairs = v.confirmPairs
	}
	o.Phases.Confirm.Top = v.top
	o.Phases.Explore.Warmup, o.Phases.Confirm.Warmup = v.warmup, v.warmup
	o.Phases.Explore.Dispatches, o.Phases.Confirm.Dispatches = v.dispatches, v.dispatches
	switch {
	case v.explorePairs < 1:
		return cmdutil.FlagErrorf("--explore-pairs %d: want at least 1", v.explorePairs)
	case v.confirmPairs < 0:
		return cmdutil.FlagErrorf("--confirm-pairs %d: want at least 1", v.confirmPairs)
	case o.Phases.Confirm.Pairs < o.Rule.MinPairs:
		return cmdutil.FlagErrorf("--confirm-pairs %d is fewer than the rule's min_pairs %d: no confirmation could decide anything", o.Phases.Confirm.Pairs, o.Rule.MinPairs)
	case v.top < 1:
		return cmdutil.FlagErrorf("--confirm-top %d: want at least 1", v.top)
	case v.warmup < 0 || v.dispatches < 0:
		return cmdutil.FlagErrorf("--warmup and --dispatches cannot be negative")
	case o.Choices != "all" && o.Choices != "first":
		return cmdutil.FlagErrorf("--choices %q: want all or first", o.Choices)
	case o.Beam < 1:
		return cmdutil.FlagErrorf("--beam %d: want at least 1", o.Beam)
	case !contains(search.Scopes, o.Scope):
		return cmdutil.FlagErrorf("--scope %q: want fn or file", o.Scope)
	}
	o.Strategy, o.Tune = "", ""
	for _, name := range o.Strategies {
		st := search.LookupStrategy(name, "")
		switch {
		case st == nil:
			return cmdutil.FlagErrorf("--strategy %q: want one of %s", name, search.StrategyNames(""))
		case st.Over == search.OverEdits && o.Strategy != "":
			return cmdutil.FlagErrorf("--strategy: %s and %s both search edits: give one (and one over parameters: %s)", o.Strategy, name, search.StrategyNames(search.OverParams))
		case st.Over == search.OverParams && o.Tune != "":
			return cmdutil.FlagErrorf("--strategy: %s and %s both search parameters: give one", o.Tune, name)
		case st.Over == search.OverEdits:
			o.Strategy = name
		default:
			o.Tune = name
		}
	}
	if o.Strategy == "" && (len(o.Ops) > 0 || len(o.Refs) > 0) {
		return cmdutil.FlagErrorf("--ops and --refs choose the edits a strategy over edits searches, and --strategy %s names none (add one: %s)", o.Tune, search.StrategyNames(search.OverEdits))
	}
	if pt := search.LookupStrategy(o.Tune, search.OverParams); pt != nil && pt.Samples && o.Samples < 1 {
		return cmdutil.FlagErrorf("--samples %d: want at least 1", o.Samples)
	}
	if set := (search.Settings{Strategy: o.Strategy, Tune: o.Tune}); o.Shard.Count > 1 && !set.Shardable() {
		return cmdutil.FlagErrorf("--shard: the %s strategy chooses each step by the results of the last, so it cannot be split; shard ablate, loo, grid or random", o.Strategy)
	}
	st := search.LookupStrategy(o.Strategy, search.OverEdits)
	if st == nil || !st.Step {
		o.MinStep = 0
	}
	if st == nil || !st.Width {
		o.Beam = 0
	}
	if o.Jobs < 0 {
		return cmdutil.FlagErrorf("--jobs %d: want at least 1", o.Jobs)
	}
	switch o.Pause {
	case "", "auto", "on", "off":
	default:
		return cmdutil.FlagErrorf("--pause-during-samples %q: want on, off or auto", o.Pause)
	}
	if o.Spec == "" {
		// --resume alone: every setting comes from the plan; flags that
		// would change it are refused rather than ignored.
		if o.Out == "" {
			return cmdutil.FlagErrorf("--resume without a spec needs --out DIR, the sweep to continue")
		}
		var set []string
		cmd.Flags().Visit(func(f *pflag.Flag) {
			switch f.Name {
			case "resume", "out", "repo", "json", "shard", "jobs", "pause-during-samples":
			default:
				set = append(set, "--"+f.Name)
			}
		})
		if len(set) > 0 {
			return cmdutil.FlagErrorf("--resume without a spec takes its settings from %s; %s would change them (give the spec and every flag as first run, or none)",
				filepath.Join(o.Out, search.PlanFile), strings.Join(set, ", "))
		}
		return nil
	}
	if len(o.Functions) == 0 {
		return cmdutil.FlagErrorf("sweep: --fn NAME is required: the function you own")
	}
	return cmdutil.CheckMacros(o.Macros.Defines, o.Macros.Undefs)
}

// parsePct parses "3%" or "0.03" as 0.03.
func parsePct(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if strings.HasSuffix(t, "%") {
		t, div = strings.TrimSpace(strings.TrimSuffix(t, "%")), 100
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f/div >= 1 {
		return 0, fmt.Errorf("bad fraction %q: want a percentage such as 3%% or a fraction such as 0.03, below 100%%", s)
	}
	return f / div, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// load reads the spec and the kernel and makes the plan: from the flags,
// or with --resume alone from the plan in --out.
func load(ctx context.Context, o *SweepOptions) (*search.Options, error) {
	so := &search.Options{Dir: o.Out, Resume: o.Resume, Repo: o.Repo, Shard: o.Shard, Version: o.Version, ReadFile: o.ReadFile}
	var plan *search.Plan
	if o.Spec == "" {
		b, err := o.ReadFile(filepath.Join(o.Out, search.PlanFile))
		if err != nil {
			return nil, cmdutil.FlagErrorf("--resume: %v (is %s a sweep's directory?)", err, o.Out)
		}
		if plan, err = search.ParsePlan(b); err != nil {
			return nil, err
		}
		so.WorkDir = resumeFrom(o, plan)
		so.ReadFile = o.ReadFile
		o.Spec, o.Functions, o.Backend = plan.Spec, plan.Functions, plan.Backend
		o.Macros = cmdutil.Macros{Defines: plan.Macros.Defines, Undefs: plan.Macros.Undefs, IncludeDirs: plan.Macros.IncludeDirs}
	}
	specBytes, err := o.ReadFile(o.Spec)
	if err != nil {
		if plan != nil && !filepath.IsAbs(o.Spec) {
			return nil, fmt.Errorf("read spec: %w (the plan in %s records it relative to the directory the sweep began in: resume from there)", err, o.Out)
		}
		return nil, fmt.Errorf("read spec: %w", err)
	}
	s, err := spec.Parse(o.Spec, specBytes)
	if err != nil {
		return nil, err
	}
	if o.NoVerify && (len(o.VerifySets) > 0 || o.VerifyBackendSet) {
		return nil, cmdutil.FlagErrorf("--no-verify turns verification off: --verify-cases and --verify-backend would not be used")
	}
	if (o.NoVerify || o.NoDetect) && len(o.CheckSets) > 0 {
		return nil, cmdutil.FlagErrorf("--check-cases are verified, and --no-verify turns verification off: give one of them")
	}
	for _, set := range append(append(append([]string(nil), o.Cases...), o.CheckSets...), o.VerifySets...) {
		if s.Set(set) == nil {
			var have []string
			for _, x := range s.Sets {
				have = append(have, x.Name)
			}
			return nil, cmdutil.FlagErrorf("--cases %q: %s has no such case set (sets: %s)", set, o.Spec, strings.Join(have, ", "))
		}
	}
	f, err := cmdutil.LoadKernel(o.ReadFile, s.Source, o.Macros)
	if err != nil {
		return nil, err
	}
	if len(f.Warnings) > 0 {
		cmdutil.PrintWarnings(o.IO.ErrOut, f)
	}
	if plan != nil {
		// Resuming from the plan alone: the spec and the kernel must be
		// what the plan was made from.
		if b := search.SHA256(f.Src); b != plan.Baseline {
			return nil, &search.ResumeError{Dir: o.Out, Msg: fmt.Sprintf("%s changed since the sweep began (sha256 %s, now %s): its results cannot be resumed against it", s.Source, plan.Baseline[:12], b[:12])}
		}
		if b := search.SHA256(specBytes); b != plan.SpecSHA256 {
			return nil, &search.ResumeError{Dir: o.Out, Msg: fmt.Sprintf("%s changed since the sweep began (sha256 %s, now %s): its results cannot be resumed against it", o.Spec, plan.SpecSHA256[:12], b[:12])}
		}
		for _, vf := range plan.Search.Files {
			text, err := o.ReadFile(vf.Path)
			if err != nil {
				return nil, &search.ResumeError{Dir: o.Out, Msg: fmt.Sprintf("hand-written variant %s of the plan: %v", vf.Path, err)}
			}
			if b := search.SHA256(text); b != vf.SHA256 {
				return nil, &search.ResumeError{Dir: o.Out, Msg: (&search.FileChangedError{Path: vf.Path, Want: vf.SHA256, Got: b}).Error()}
			}
		}
	}
	mk := o.NewBackend
	if mk == nil {
		mk = cmdutil.ChooseBackend
	}
	mk0 := mk
	mk = func(ctx context.Context, name string) (backend.Backend, error) {
		b, err := mk0(ctx, name)
		if err == nil {
			cmdutil.ApplyCompileTimeout(b, o.CompileTimeout)
		}
		return b, err
	}
	be, err := mk(ctx, o.Backend)
	if err != nil {
		return nil, err
	}
	if ok, why := be.Available(ctx); !ok {
		return nil, &backend.EnvError{Op: "backend " + be.Name() + " is not available", Err: errors.New(why)}
	}
	if plan == nil {
		// The timing backend's own checking mode verifies, unless another
		// backend is named; one without a checking mode needs one.
		verifyBackend := o.VerifyBackend
		if o.NoVerify || o.NoDetect || verifyBackend == be.Name() || be.Info(ctx).Check && !o.VerifyBackendSet {
			verifyBackend = ""
		}
		if o.Path == "" {
			o.Path = search.DefaultPath(s.Source, o.Repo)
		}
		paths, err := search.ExpandVariantPaths(o.Variants)
		if err != nil {
			return nil, cmdutil.FlagErrorf("%v", err)
		}
		files, err := search.LoadVariantFiles(paths, o.ReadFile, f.Src, f, o.Functions)
		if err != nil {
			return nil, cmdutil.FlagErrorf("%v", err)
		}
		ops := o.Ops
		if len(ops) == 1 && ops[0] == "all" {
			ops = nil
			for _, m := range all.Mutations {
				ops = append(ops, m.Name)
			}
		}
		scope := o.Scope
		if scope == "fn" {
			scope = ""
		}
		plan, err = search.NewPlan(s, specBytes, f, o.ReadFile, search.PlanOptions{
			NoVerify: o.NoVerify, VerifyBackend: verifyBackend, VerifySets: o.VerifySets, HeldOut: heldOutOption(o.HeldOut),
			Functions: o.Functions, Backend: o.Backend, Sets: o.Cases, CheckSets: o.CheckSets,
			Macros: search.Macros{Defines: o.Macros.Defines, Undefs: o.Macros.Undefs, IncludeDirs: o.Macros.IncludeDirs},
			Target: o.Target, ExploreCase: o.Explore, Path: o.Path, Explore: o.Phases.Explore, Confirm: o.Phases.Confirm,
			TGLimit: o.TGLimit, NoDetect: o.NoDetect, Race: o.Race, Strict: o.Strict, Rule: o.Rule, Parity: o.Parity, Screen: o.Screen,
			Search: search.Settings{Strategy: o.Strategy, Ops: ops, Choices: o.Choices, Refs: o.Refs, Seed: o.Seed,
				Beam: o.Beam, MinStep: o.MinStep, Budget: o.Budget, Files: files, Scope: scope,
				Tune: o.Tune, Samples: o.Samples, Point: o.Point},
		})
		if err != nil {
			return nil, cmdutil.FlagErrorf("%v", err)
		}
	}
	if so.Dir == "" {
		hash, err := plan.Hash()
		if err != nil {
			return nil, err
		}
		so.Dir = fmt.Sprintf("metalab-sweep-%s-%s", strings.Join(plan.Functions, "+"), hash[:8])
		o.Out = so.Dir
	}
	if plan.Verify != nil && !plan.Verify.Off && plan.Verify.Backend != "" {
		// Before any work: a verification backend that cannot run here
		// is this machine's fault (exit 3), never a bytes-only sweep.
		vb, err := mk(ctx, plan.Verify.Backend)
		if err != nil {
			return nil, err
		}
		if ok, why := vb.Available(ctx); !ok {
			return nil, &backend.EnvError{Op: "verification backend " + vb.Name() + " is not available (verify elsewhere, or --no-verify to time bytes-confirmed variants that are not verified)", Err: errors.New(why)}
		}
		so.Verify = vb
	}
	so.Plan, so.Spec, so.File, so.Backend = plan, s, f, be
	so.Jobs = o.Jobs
	so.PauseDuringSamples = o.Pause == "on" || o.Pause != "off" && search.PauseByDefault(be.Name())
	return so, nil
}

func sweepRun(ctx context.Context, o *SweepOptions) (err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	defer func() {
		if err != nil && o.JSON {
			var re *cmdutil.ReportedError
			if !errors.As(err, &re) {
				cmdutil.WriteJSON(o.IO.Out, cmdutil.ErrorJSON{Error: err.Error(), Kind: cmdutil.ErrorKind(err)})
				err = &cmdutil.ReportedError{Err: err}
			}
		}
	}()
	so, err := load(ctx, o)
	if err != nil {
		return err
	}
	var rerr *search.ResumeError
	prog := newProgress(o.IO.ErrOut, o.Terminal)
	so.Progress = prog.event
	start := time.Now()
	res, err := search.Run(ctx, *so)
	prog.stop()
	var repoErr *search.RepoError
	if errors.As(err, &rerr) || errors.As(err, &repoErr) {
		return cmdutil.FlagErrorf("%v", err)
	}
	if res == nil {
		return err
	}
	if o.JSON {
		out := struct {
			*search.Result
			Seconds     float64 `json:"seconds"`
			Interrupted bool    `json:"interrupted,omitempty"`
			Error       string  `json:"error,omitempty"`
		}{Result: res, Seconds: time.Since(start).Seconds()}
		if err != nil {
			out.Error, out.Interrupted = err.Error(), errors.Is(err, context.Canceled)
		}
		if werr := cmdutil.WriteJSON(o.IO.Out, out); werr != nil {
			return werr
		}
	} else {
		summary(o, res, time.Since(start))
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(o.IO.ErrOut, "interrupted: what finished is in %s; continue with: metalab sweep --resume --out %s\n", res.Dir, res.Dir)
		return &cmdutil.ReportedError{Err: err}
	case errors.Is(err, search.ErrControl):
		return &cmdutil.ReportedError{Err: err}
	case err != nil:
		return err
	case len(res.Retained) == 0:
		return &cmdutil.ReportedError{Err: errors.New("no variant retained")}
	}
	return nil
}

// summary prints what the sweep came to and where its files are.
func summary(o *SweepOptions, r *search.Result, took time.Duration) {
	w := o.IO.Out
	fmt.Fprintf(w, "sweep %s in %s (plan %s)\n", r.Dir, took.Round(time.Second), r.Plan[:12])
	if r.Control != "pass" {
		fmt.Fprintf(w, "control: %s: no variant was judged\n", r.Control)
	}
	fmt.Fprintf(w, "checks: %s\n", r.Verification)
	if r.Parity != "" && r.Parity != "bitwise" {
		fmt.Fprintf(w, "parity: %s; %d variants passed it NOT BITWISE identical\n", r.Parity, r.NotBitwise)
	}
	if r.BaselineFindings > 0 {
		fmt.Fprintf(w, "baseline findings: %d, the baseline's own: they do not stop a variant that keeps them (see %s)\n", r.BaselineFindings, r.Report)
	}
	fmt.Fprintf(w, "variants: %d built, %d failed their checks, %d explored, %d confirmed\n", r.Variants, r.Failed, r.Explored, r.Confirmed)
	if r.FailedAfterTiming > 0 {
		fmt.Fprintf(w, "failed after timing: %d (the outputs of a measurement's last timed sample differed from the baseline's)\n", r.FailedAfterTiming)
	}
	if r.ProofViolated > 0 {
		fmt.Fprintf(w, "proof violated: %d variants made only of operators that claim to keep outputs failed their checks; this is a bug in metalab, not in the kernel: please report it (see the variants' logs in %s)\n",
			r.ProofViolated, filepath.Join(r.Dir, search.LogsDir))
	}
	if r.CheckSeconds > 0 {
		pool := ""
		if o.Jobs > 1 {
			pool = fmt.Sprintf(" (summed over a pool of %d jobs, beside the timing)", o.Jobs)
		}
		fmt.Fprintf(w, "checking: %.1f s building, verifying and confirming%s: %.1f s of it verifying, %.1f s confirming, the rest compiling\n",
			r.CheckSeconds, pool, r.VerifySeconds, r.ConfirmSeconds)
	}
	if r.RunnerStarts > 0 {
		fmt.Fprintf(w, "runners: %d started on the timing backend, %.1f s of starts\n", r.RunnerStarts, r.RunnerStartSeconds)
	}
	if len(r.RunnerRequests) > 0 {
		fmt.Fprintf(w, "runner requests on the timing backend: %s\n", requestsText(r.RunnerRequests))
	}
	if len(r.SampleRequests) > 0 {
		fmt.Fprintf(w, "runner requests of the measurements: %s\n", requestsText(r.SampleRequests))
	}
	if r.ConfirmTurns > 0 {
		fmt.Fprintf(w, "confirmation turns: %d checks held the device one after another for %.1f s (%.2f s each)\n",
			r.ConfirmTurns, r.ConfirmTurnSeconds, r.ConfirmTurnSeconds/float64(r.ConfirmTurns))
	}
	if r.TimingSeconds > 0 {
		fmt.Fprintf(w, "timing: %.1f s in measurements, %.1f s of it sample time by the backend's clock (%.1f %%); the samples' runs took %.1f s, writing the pairs %.1f s\n",
			r.TimingSeconds, r.SampleSeconds, 100*r.SampleSeconds/r.TimingSeconds, r.RunSeconds, r.StoreSeconds)
	}
	fmt.Fprintf(w, "verdicts: %d retained, %d rejected, %d inconclusive", len(r.Retained), r.Rejected, r.Inconclusive)
	if r.Pending > 0 {
		fmt.Fprintf(w, ", %d pending", r.Pending)
	}
	fmt.Fprintln(w)
	if r.Budget != "" {
		fmt.Fprintf(w, "stopped early: %s\n", r.Budget)
	}
	if r.Suggest != "" {
		fmt.Fprintf(w, "suggestion: %s\n", r.Suggest)
	}
	for _, x := range r.Retained {
		if x.Patch != "" {
			fmt.Fprintf(w, "retained %s: patch %s\n", x.Name, filepath.Join(r.Dir, x.Patch))
		} else {
			fmt.Fprintf(w, "retained %s: %s\n", x.Name, x.Note)
		}
		if x.Parity != "" {
			fmt.Fprintf(w, "  %s\n", x.Parity)
		}
		for _, n := range x.HostNotes {
			fmt.Fprintf(w, "  host side: %s\n", n)
		}
	}
	fmt.Fprintf(w, "report: %s (and report.json, plots/)\n", r.Report)
	fmt.Fprintf(w, "results: %s (metalab results %s)\n", r.Store, r.Dir)
}

// resumeFrom makes o read the plan's relative paths (the spec, its
// sources, hand-written variants) relative to the directory the sweep
// began in, as its manifest records it, when they are not found from
// here: `sweep --resume --out DIR` works from any directory. It returns
// that directory, or "" when the paths are read from here.
func resumeFrom(o *SweepOptions, plan *search.Plan) string {
	if filepath.IsAbs(plan.Spec) {
		return ""
	}
	if _, err := o.ReadFile(plan.Spec); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	m, err := search.ReadManifest(o.Out)
	if err != nil || m.WorkDir == "" {
		return ""
	}
	base, read := m.WorkDir, o.ReadFile
	if _, err := read(filepath.Join(base, plan.Spec)); err != nil {
		return ""
	}
	o.ReadFile = func(p string) ([]byte, error) {
		if !filepath.IsAbs(p) {
			if b, err := read(filepath.Join(base, p)); !errors.Is(err, fs.ErrNotExist) {
				return b, err
			}
		}
		return read(p)
	}
	return base
}

// heldOutOption maps --held-out (-1 default, 0 off) to
// search.PlanOptions.HeldOut (0 default, below 0 off).
func heldOutOption(n int) int {
	switch {
	case n < 0:
		return 0
	case n == 0:
		return -1
	}
	return n
}

// requestsText is the summary's account of runner requests: calls, wall
// time and the bytes that moved, by type.
func requestsText(stats []backend.RequestStat) string {
	var parts []string
	for _, s := range stats {
		t := fmt.Sprintf("%s %d (%.1f s", s.Request, s.Calls, s.Seconds)
		if s.Sent >= 1<<20 {
			t += fmt.Sprintf(", %.0f MiB sent", float64(s.Sent)/(1<<20))
		}
		if s.Received >= 1<<20 {
			t += fmt.Sprintf(", %.0f MiB back", float64(s.Received)/(1<<20))
		}
		parts = append(parts, t+")")
	}
	return strings.Join(parts, ", ")
}
