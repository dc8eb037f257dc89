// Package sites implements `metalab sites`: list the mutation sites of a
// kernel's functions, with stable ids to pass to `metalab mutate`.
package sites

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/all"
)

// SitesOptions are the inputs of `metalab sites`.
type SitesOptions struct {
	IO       *cmdutil.IOStreams
	ReadFile func(string) ([]byte, error)
	Ctx      context.Context // done on Ctrl-C or SIGTERM: the listing stops; nil means never

	File        string
	Fns         []string
	Ops         []string
	Why         bool
	JSON        bool
	Defines     []string // -D NAME=VALUE
	Undefs      []string // -U NAME
	IncludeDirs []string // -I DIR
	Spec        string   // --spec: prove barrier changes for its threads per threadgroup
}

// NewCmdSites returns the sites command; runF, if non-nil, replaces the
// run function (tests capture the parsed options with it).
func NewCmdSites(f *cmdutil.Factory, runF func(*SitesOptions) error) *cobra.Command {
	opts := &SitesOptions{IO: f.IOStreams, ReadFile: f.ReadFile}
	cmd := &cobra.Command{
		Use:   "sites <kernel.metal> [flags]",
		Short: "List the mutation sites of a kernel",
		Long: `List every place a mutation applies in the kernel's functions, with a
stable site id, its position and its choices. With --why, also list the
places mutations looked at and skipped, with the reason.

A site id is <mutation>/<function>/<ordinal>-<hash>: the ordinal counts the
mutation's sites in the function, the hash covers the site's text and its
occurrence among sites with identical text, so an id either names the same
place or is refused as stale. Sites listed under -D/-U carry the flags after
'@' (unroll/k/0-1a2b3c@BLOCK:64,-DEBUG): mutate refuses such an id under
other flags and says which changed.`,
		Example: "  metalab sites kernels/example.metal --fn reduce -D BLOCK=64\n  metalab sites kernels/example.metal --op unroll-pragma --why",
		Args:    cmdutil.ExactArgs(1, "<kernel.metal>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File, opts.Ctx = args[0], cmd.Context()
			if err := cmdutil.CheckMacros(opts.Defines, opts.Undefs); err != nil {
				return err
			}
			for _, op := range opts.Ops {
				if all.Lookup(op) == nil {
					return cmdutil.FlagErrorf("unknown --op %q (mutations: %s)", op, strings.Join(names(), ", "))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return sitesRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Fns, "fn", nil, "only functions named `NAME`: a name, Owner::name (GemvKernel::run, Op::operator()) or a kernel's host_name (repeatable; default all)")
	cmd.Flags().StringArrayVar(&opts.Ops, "op", nil, "only mutation `OP` (repeatable; default all)")
	cmd.Flags().BoolVar(&opts.Why, "why", false, "also list skipped places and why")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	cmdutil.AddMacroFlags(cmd.Flags(), &opts.Defines, &opts.Undefs, &opts.IncludeDirs)
	cmd.Flags().StringVar(&opts.Spec, "spec", "", "prove barrier changes for the threads per threadgroup of `SPEC`'s stages and cases (two and three dimensions) instead of assuming one-dimensional threadgroups; pass the same --spec to mutate")
	return cmd
}

func names() []string {
	var n []string
	for _, m := range all.Mutations {
		n = append(n, m.Name)
	}
	return n
}

// A jsonSite is one site in --json output.
type jsonSite struct {
	ID       string       `json:"id"`
	Mutation string       `json:"mutation"`
	Function string       `json:"function"`
	Line     int          `json:"line"`
	Col      int          `json:"col"`
	Pos      int          `json:"pos"`
	End      int          `json:"end"`
	Message  string       `json:"message"`
	Choices  []jsonChoice `json:"choices"`
}

type jsonChoice struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

type jsonSkip struct {
	Mutation string `json:"mutation"`
	Function string `json:"function"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Reason   string `json:"reason"`
}

type jsonOut struct {
	File  string     `json:"file"`
	Flags []string   `json:"flags,omitempty"` // the -D/-U flags the sites were listed under, as arguments; their ids carry them after '@'
	Sites []jsonSite `json:"sites"`
	Skips []jsonSkip `json:"skips,omitzero"` // with --why, always present ([] when none)
}

func sitesRun(opts *SitesOptions) error {
	var f *msl.File
	var found []*mutate.FoundSite
	var skips []*mutate.FoundSkip
	// Interrupted, nothing is listed: the proofs may have given up half
	// way.
	err := cmdutil.Interruptible(opts.Ctx, "the sites of "+opts.File+" were listed", func() error {
		var err error
		f, err = cmdutil.LoadKernel(opts.ReadFile, opts.File, cmdutil.Macros{Defines: opts.Defines, Undefs: opts.Undefs, IncludeDirs: opts.IncludeDirs})
		if err != nil {
			return err
		}
		cmdutil.PrintWarnings(opts.IO.ErrOut, f)
		if opts.Ctx != nil {
			f.SetContext(opts.Ctx)
		}
		if _, err := mutate.Funcs(f, opts.Fns); err != nil {
			return &cmdutil.FlagError{Err: err}
		}
		muts := all.Mutations
		if len(opts.Ops) > 0 {
			muts = slices.DeleteFunc(slices.Clone(muts), func(m *mutate.Mutation) bool { return !slices.Contains(opts.Ops, m.Name) })
		}
		geo, err := cmdutil.SpecGeometry(opts.Spec)
		if err != nil {
			return err
		}
		found, skips, err = mutate.FindAllWith(f, muts, opts.Fns, mutate.Options{Threads: geo})
		return err
	})
	if err != nil {
		return err
	}
	out := jsonOut{File: opts.File, Flags: mutate.FlagsOf(f).Args(), Sites: []jsonSite{}}
	for _, s := range found {
		p := f.Position(s.Pos)
		js := jsonSite{ID: s.ID, Mutation: s.Mutation.Name, Function: s.Func.Name, Line: p.Line, Col: p.Column, Pos: s.Pos, End: s.End, Message: s.Message}
		for _, c := range s.Choices {
			js.Choices = append(js.Choices, jsonChoice{Name: c.Name, Message: c.Message})
		}
		out.Sites = append(out.Sites, js)
	}
	if opts.Why {
		out.Skips = []jsonSkip{}
		for _, s := range skips {
			p := f.Position(s.Pos)
			out.Skips = append(out.Skips, jsonSkip{Mutation: s.Mutation.Name, Function: s.Func.Name, Line: p.Line, Col: p.Column, Reason: s.Reason})
		}
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, out)
	}
	return printTable(opts, out)
}

func printTable(opts *SitesOptions, out jsonOut) error {
	w := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	if len(out.Flags) > 0 {
		// Site ids carry the flags after '@': mutate refuses them under
		// other flags, which would change what an ordinal names.
		fmt.Fprintf(w, "macro flags: %s\n\n", strings.Join(out.Flags, " "))
	}
	if len(out.Sites) == 0 {
		fmt.Fprintf(w, "no sites in %s\n", out.File)
	} else {
		fmt.Fprintln(w, "SITE\tFUNCTION\tPOS\tMESSAGE\tCHOICES")
		for _, s := range out.Sites {
			var cs []string
			for _, c := range s.Choices {
				cs = append(cs, c.Name)
			}
			fmt.Fprintf(w, "%s\t%s\t%d:%d\t%s\t%s\n", s.ID, s.Function, s.Line, s.Col, s.Message, strings.Join(cs, ","))
		}
	}
	if opts.Why {
		if len(out.Skips) == 0 {
			fmt.Fprintln(w, "\nno skipped places")
		} else {
			fmt.Fprintln(w, "\nSKIPPED\tFUNCTION\tPOS\tREASON")
			for _, s := range out.Skips {
				fmt.Fprintf(w, "%s\t%s\t%d:%d\t%s\n", s.Mutation, s.Function, s.Line, s.Col, s.Reason)
			}
		}
	}
	return w.Flush()
}
