// Package run implements `metalab run`: run the cases of a kernel spec
// and dump every buffer before and after as NumPy .npy files, so that a
// kernel engineer can look at the bytes.
package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"metalab/backend"
	"metalab/check"
	"metalab/internal/cli/cmdutil"
	"metalab/spec"
)

// RunOptions are the inputs of `metalab run`.
type RunOptions struct {
	IO       *cmdutil.IOStreams
	ReadFile func(string) ([]byte, error)
	// NewBackend returns the backend called name; nil means the built-in
	// backends (cpu).
	NewBackend func(name string) (backend.Backend, error)
	// CompileTimeout bounds one compile (--compile-timeout).
	CompileTimeout time.Duration

	Spec    string
	Sets    []string // --cases: case sets
	Cases   []string // --case: NAME or SET/NAME
	Variant string   // replaces the spec's main source
	Dump    string   // directory
	Backend string
	Timeout time.Duration // per case; 0 means check.ControlTimeout
	JSON    bool
}

// NewCmdRun returns the run command; runF, if non-nil, replaces the run
// function (tests capture the parsed options with it).
func NewCmdRun(f *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: f.IOStreams, ReadFile: f.ReadFile}
	cmd := &cobra.Command{
		Use:   "run <spec.yaml> --dump DIR [flags]",
		Short: "Run a spec's cases and dump every buffer as .npy files",
		Long: `Run the selected cases of a kernel spec (the baseline, or --variant in
place of the spec's main source) and write every buffer of every case,
before and after the run, as NumPy .npy files under --dump DIR, with an
index.json that lists the cases, their variables, stages and buffers
(shape, dtype, role and files). Load them with numpy.load.

Before anything runs, each case is held to its kernels: every buffer
parameter bound with a fitting element type, every function constant the
kernels use given a value. Without --cases and --case, the spec's default
sets run; --case picks cases by name (NAME or SET/NAME) from --cases, or
from every set.

DIR must be new, empty, or a previous dump (it has index.json): the
previous dump's files are replaced, nothing else in DIR is touched.
Progress goes to standard error; on Ctrl-C the run stops and the index
lists the cases that finished.

The exit status is 0 when every case ran, 1 when one failed (its inputs
are still dumped), the spec is wrong or the run was interrupted, 2 for
usage errors.`,
		Example: "  metalab run kernels/qsa_prompt.yaml --cases quick --dump /tmp/qsa\n" +
			"  metalab run k.yaml --case quick/N=64 --variant /tmp/v1.metal --dump /tmp/v1 --json",
		Args: cmdutil.ExactArgs(1, "<spec.yaml>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = args[0]
			if opts.Dump == "" {
				return cmdutil.FlagErrorf("--dump DIR is required: the directory to write the buffers to")
			}
			if opts.Timeout < 0 {
				return cmdutil.FlagErrorf("--timeout %v: want a positive duration", opts.Timeout)
			}
			if runF != nil {
				return runF(opts)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runRun(ctx, opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Sets, "cases", nil, "case set `NAME` (repeatable or comma-separated; default: the spec's defaults, or every set with --case)")
	cmd.Flags().StringArrayVar(&opts.Cases, "case", nil, "only case `NAME` or SET/NAME (repeatable)")
	cmd.Flags().StringVar(&opts.Variant, "variant", "", "run variant source `FILE` in place of the spec's main source")
	cmd.Flags().StringVar(&opts.Dump, "dump", "", "write the buffers under `DIR` (required)")
	cmdutil.AddCompileTimeoutFlag(cmd.Flags(), &opts.CompileTimeout)
	cmd.Flags().StringVar(&opts.Backend, "backend", "cpu", "backend `NAME` to compile and run on: cpu, cuda, metal, or auto (the first of metal, cuda, cpu that runs here)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "per-case `DURATION` limit (default 30m)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write the dump's index as JSON")
	return cmd
}

// selectCases returns the cases of s that opts selects.
func selectCases(s *spec.Spec, opts *RunOptions) ([]spec.Case, error) {
	var names []string
	for _, set := range s.Sets {
		names = append(names, set.Name)
	}
	for _, name := range opts.Sets {
		if s.Set(name) == nil {
			return nil, cmdutil.FlagErrorf("--cases %q: %s has no such case set (sets: %s)", name, opts.Spec, strings.Join(names, ", "))
		}
	}
	sets := opts.Sets
	if len(sets) == 0 && len(opts.Cases) == 0 {
		sets = s.DefaultSets()
	}
	cases, err := s.Cases(sets...)
	if err != nil {
		return nil, err
	}
	if len(opts.Cases) == 0 {
		return cases, nil
	}
	var out []spec.Case
	for _, c := range cases {
		for _, sel := range opts.Cases {
			if sel == c.Name || sel == c.Set+"/"+c.Name {
				out = append(out, c)
				break
			}
		}
	}
	for _, sel := range opts.Cases {
		found := false
		for _, c := range cases {
			found = found || sel == c.Name || sel == c.Set+"/"+c.Name
		}
		if !found {
			var have []string
			for _, c := range cases {
				have = append(have, c.Set+"/"+c.Name)
			}
			if len(have) > 12 {
				have = append(have[:12], "...")
			}
			return nil, cmdutil.FlagErrorf("--case %q: no such case in sets %s (cases: %s)", sel, strings.Join(setsOf(cases), ", "), strings.Join(have, ", "))
		}
	}
	return out, nil
}

func setsOf(cases []spec.Case) []string {
	var out []string
	for _, c := range cases {
		if len(out) == 0 || out[len(out)-1] != c.Set {
			out = append(out, c.Set)
		}
	}
	return out
}

// sources reads the text of every stage source, with the variant in
// place of the spec's main source.
func sources(s *spec.Spec, opts *RunOptions) (map[string][]byte, error) {
	texts := map[string][]byte{}
	if opts.Variant != "" {
		text, err := opts.ReadFile(opts.Variant)
		if err != nil {
			return nil, fmt.Errorf("read variant: %w", err)
		}
		texts[s.Source] = text
	}
	for _, st := range s.Stages {
		if _, ok := texts[st.Source]; ok {
			continue
		}
		text, err := opts.ReadFile(st.Source)
		if err != nil {
			return nil, &spec.Error{Pos: st.SourcePos, Msg: fmt.Sprintf("read source: %v", err)}
		}
		texts[st.Source] = text
	}
	return texts, nil
}

// A caseResult is how one case went, for the report.
type caseResult struct {
	name    string
	err     error
	changed []string
	seconds float64
}

func runRun(ctx context.Context, opts *RunOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	data, err := opts.ReadFile(opts.Spec)
	if err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	s, err := spec.Parse(opts.Spec, data)
	if err != nil {
		return err
	}
	cases, err := selectCases(s, opts)
	if err != nil {
		return err
	}
	texts, err := sources(s, opts)
	if err != nil {
		return err
	}
	// Every case is made and held to its kernels before anything runs,
	// so that a wrong spec costs no run.
	var insts []*spec.Instance
	var bad spec.ErrorList
	fmt.Fprintf(opts.IO.ErrOut, "preparing %d cases...\n", len(cases))
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted while preparing the cases: %w", err)
		}
		in, err := s.Instantiate(c)
		if err != nil {
			return err
		}
		err = in.CheckKernels(func(path string) ([]byte, error) {
			if t, ok := texts[path]; ok {
				return t, nil
			}
			return nil, fmt.Errorf("%s: not a stage source", path)
		})
		var list spec.ErrorList
		switch {
		case errors.As(err, &list):
			bad = append(bad, list...)
		case err != nil:
			return err
		}
		insts = append(insts, in)
	}
	if err := dedupe(bad).Err(); err != nil {
		return err
	}
	mk := opts.NewBackend
	if mk == nil {
		mk = func(name string) (backend.Backend, error) { return cmdutil.ChooseBackend(ctx, name) }
	}
	be, err := mk(opts.Backend)
	if err != nil {
		return err
	}
	cmdutil.ApplyCompileTimeout(be, opts.CompileTimeout)
	if ok, why := be.Available(ctx); !ok {
		return &backend.EnvError{Op: "backend " + be.Name() + " is not available", Err: errors.New(why)}
	}
	d, err := check.NewDumper(opts.Dump, check.DumpIndex{Spec: opts.Spec, Source: s.Source, Variant: opts.Variant, Backend: be.Name()})
	if err != nil {
		return err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = check.ControlTimeout
	}
	r := &runner{be: be, texts: texts, progs: map[string]backend.Program{}, compErr: map[string]error{}, threads: map[string]int{}}
	for _, in := range insts {
		for _, st := range in.Stages {
			k := st.Source + "\x00" + st.Entry
			r.threads[k] = max(r.threads[k], st.Threads.Count())
		}
	}
	defer r.close()
	var results []caseResult
	interrupted := false
	for i, in := range insts {
		name := in.Case.Set + "/" + in.Case.Name
		fmt.Fprintf(opts.IO.ErrOut, "case %d/%d %s: running...\n", i+1, len(insts), name)
		start := time.Now()
		after, runErr := r.run(ctx, in, timeout)
		if ctx.Err() != nil {
			interrupted = true
			fmt.Fprintf(opts.IO.ErrOut, "case %d/%d %s: interrupted\n", i+1, len(insts), name)
			break
		}
		var runs []check.DumpRun
		if runErr == nil {
			runs = []check.DumpRun{{Label: "after", Bytes: after}}
		}
		if err := d.Case(in, runs, runErr); err != nil {
			return err
		}
		res := caseResult{name: name, err: runErr, seconds: time.Since(start).Seconds()}
		ix := d.Index()
		for _, b := range ix.Cases[len(ix.Cases)-1].Buffers {
			if len(b.Changed) > 0 {
				res.changed = append(res.changed, b.Name)
			}
		}
		results = append(results, res)
		status := fmt.Sprintf("done in %.1fs", res.seconds)
		if runErr != nil {
			status = "failed: " + firstLine(runErr.Error())
		}
		fmt.Fprintf(opts.IO.ErrOut, "case %d/%d %s: %s\n", i+1, len(insts), name, status)
	}
	if !interrupted {
		if err := d.Close(); err != nil {
			return err
		}
	}
	if opts.JSON {
		err = cmdutil.WriteJSON(opts.IO.Out, d.Index())
	} else {
		err = report(opts, d.Index(), results, len(insts))
	}
	if err != nil {
		return err
	}
	if interrupted {
		return fmt.Errorf("interrupted: %d of %d cases ran and are dumped in %s (its index says complete: false)", len(results), len(insts), opts.Dump)
	}
	for _, res := range results {
		if res.err != nil {
			return cmdutil.ErrSilent
		}
	}
	return nil
}

// report writes a table of the cases for people.
func report(opts *RunOptions, ix *check.DumpIndex, results []caseResult, total int) error {
	w := opts.IO.Out
	what := "baseline " + ix.Source
	if ix.Variant != "" {
		what = "variant " + ix.Variant + " in place of " + ix.Source
	}
	fmt.Fprintf(w, "spec %s: %d of %d cases, %s, on %s\n", ix.Spec, len(results), total, what, ix.Backend)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tSTATUS\tCHANGED\tDIR")
	for i, res := range results {
		status := "ok"
		if res.err != nil {
			status = "failed"
		}
		changed := strings.Join(res.changed, ",")
		if changed == "" {
			changed = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", res.name, status, changed, filepath.Join(opts.Dump, filepath.FromSlash(ix.Cases[i].Dir)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, res := range results {
		if res.err != nil {
			fmt.Fprintf(w, "\ncase %s: %v\n", res.name, res.err)
		}
	}
	fmt.Fprintf(w, "\nindex: %s\n", filepath.Join(opts.Dump, "index.json"))
	return nil
}

// A runner compiles and runs the stages of cases, compiling each stage
// configuration once.
type runner struct {
	be      backend.Backend
	texts   map[string][]byte
	progs   map[string]backend.Program
	compErr map[string]error
	// threads is the most threads per threadgroup of each stage (source
	// and entry) over the cases run: what its program is compiled for
	// (backend.Source.MaxThreads), as check compiles it.
	threads map[string]int
}

func (r *runner) close() {
	for _, p := range r.progs {
		p.Close()
	}
}

// run compiles the stages of in and runs them; a kernel failure (a
// compile error too) is returned as the case's error.
func (r *runner) run(ctx context.Context, in *spec.Instance, timeout time.Duration) (map[string][]byte, error) {
	var progs []backend.Program
	for _, st := range in.Stages {
		p, err := r.compile(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", st.Entry, err)
		}
		progs = append(progs, p)
	}
	return check.Execute(ctx, progs, in, backend.Order{Kind: "in-order"}, timeout)
}

func (r *runner) compile(ctx context.Context, st *spec.Stage) (backend.Program, error) {
	text := r.texts[st.Source]
	key := st.CompileKey(text)
	threads := r.threads[st.Source+"\x00"+st.Entry]
	if p, ok := r.progs[key]; ok {
		return p, nil
	}
	if err, ok := r.compErr[key]; ok {
		return nil, err
	}
	p, err := r.be.Compile(ctx, backend.Source{
		Name: st.Source, Text: text, Dir: filepath.Dir(st.Source), IncludeDirs: st.IncludeDirs, Entry: st.Entry,
		Defines: st.Defines, Constants: st.Constants, MaxThreads: threads,
	})
	if err != nil {
		if ctx.Err() == nil {
			r.compErr[key] = err
		}
		return nil, err
	}
	r.progs[key] = p
	return p, nil
}

// dedupe drops errors that repeat an earlier one's position and message
// but for the case prefix, so a spec mistake shared by every case is
// reported once.
func dedupe(l spec.ErrorList) spec.ErrorList {
	seen := map[string]bool{}
	var out spec.ErrorList
	for _, e := range l {
		msg := e.Msg
		if rest, ok := strings.CutPrefix(msg, "case "); ok {
			if _, after, ok := strings.Cut(rest, ": "); ok {
				msg = after
			}
		}
		key := e.Pos.String() + "\x00" + msg
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, e)
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
