// Package mutate implements `metalab mutate`: build a named variant of a
// kernel by applying chosen site choices to one owned function.
package mutate

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/all"
	"metalab/variants"
)

// MutateOptions are the inputs of `metalab mutate`.
type MutateOptions struct {
	IO        *cmdutil.IOStreams
	ReadFile  func(string) ([]byte, error)
	Ctx       context.Context                      // done on Ctrl-C or SIGTERM: nothing is written; nil means never
	WriteFile func(path string, data []byte) error // atomic

	File        string
	Fns         []string
	Apply       []string // SITE[=CHOICE]
	Refs        []mutate.SiteRef
	Output      string
	JSON        bool
	Defines     []string // -D NAME=VALUE
	Undefs      []string // -U NAME
	IncludeDirs []string // -I DIR
	Spec        string   // --spec: the spec the sites were listed under (sites --spec)
}

// NewCmdMutate returns the mutate command; runF, if non-nil, replaces the
// run function.
func NewCmdMutate(f *cmdutil.Factory, runF func(*MutateOptions) error) *cobra.Command {
	opts := &MutateOptions{IO: f.IOStreams, ReadFile: f.ReadFile, WriteFile: cmdutil.WriteFileAtomic}
	cmd := &cobra.Command{
		Use:   "mutate <kernel.metal> --fn NAME --apply SITE[=CHOICE]... [flags]",
		Short: "Build a variant of a kernel from chosen sites",
		Long: `Apply the chosen choices of the given sites (ids from 'metalab sites') to
the kernel and write the variant's source, to -o or standard output. The
variant's deterministic name and sha256 are printed (to standard error when
the source goes to standard output), with the macro flags it was built
under. A site's choice defaults to its first. Several --apply compose;
choices whose edits overlap are refused. A variant is a kernel like any
other: list its sites and mutate it again to compose further.

Exit status: 0 a variant was built; 3 the chosen sites cannot be applied
together (an infeasible combination); 4 a site ref does not name a site of
this source as listed (stale, unknown, or listed under other -D/-U, which
the message names); 1 other failures; 2 usage errors.`,
		Example: "  metalab mutate kernels/example.metal --fn reduce --apply unroll-pragma/reduce/0-1a2b3c=count4 -o /tmp/v.metal",
		Args:    cmdutil.ExactArgs(1, "<kernel.metal>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File, opts.Ctx = args[0], cmd.Context()
			if err := cmdutil.CheckMacros(opts.Defines, opts.Undefs); err != nil {
				return err
			}
			if len(opts.Fns) == 0 {
				return cmdutil.FlagErrorf("--fn is required: name the function you own")
			}
			if len(opts.Apply) == 0 {
				return cmdutil.FlagErrorf("--apply is required: give at least one SITE[=CHOICE] from 'metalab sites'")
			}
			opts.Refs = nil
			for _, a := range opts.Apply {
				r, err := mutate.ParseSiteRef(a)
				if err != nil {
					return &cmdutil.FlagError{Err: err}
				}
				if all.Lookup(r.Mutation) == nil {
					return cmdutil.FlagErrorf("site %s: unknown mutation %q", a, r.Mutation)
				}
				opts.Refs = append(opts.Refs, r)
			}
			if opts.Output != "" && cmdutil.SameFile(opts.Output, opts.File) {
				return cmdutil.FlagErrorf("-o %s would overwrite the kernel source; write the variant elsewhere", opts.Output)
			}
			if runF != nil {
				return runF(opts)
			}
			return mutateRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Fns, "fn", nil, "owned function `NAME`: a name, Owner::name or a kernel's host_name (repeatable, required)")
	cmd.Flags().StringArrayVar(&opts.Apply, "apply", nil, "apply `SITE[=CHOICE]` (repeatable, required)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write the variant to `FILE` instead of standard output")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	cmdutil.AddMacroFlags(cmd.Flags(), &opts.Defines, &opts.Undefs, &opts.IncludeDirs)
	cmd.Flags().StringVar(&opts.Spec, "spec", "", "resolve sites listed with 'metalab sites --spec `SPEC`' (barrier changes proven for its threads per threadgroup)")
	return cmd
}

// jsonOut is the --json output.
type jsonOut struct {
	Name       string      `json:"name"`
	Sha256     string      `json:"sha256"`
	Base       string      `json:"base"`
	BaseSha256 string      `json:"base_sha256"`
	Flags      []string    `json:"flags,omitempty"` // the -D/-U the base was parsed and the refs resolved under
	Refs       []string    `json:"refs"`
	Edits      []edit.Edit `json:"edits"`
	Output     string      `json:"output,omitempty"`
	Source     string      `json:"source,omitempty"` // only without -o
}

func mutateRun(opts *MutateOptions) error {
	// Interrupted, nothing is written: the proofs may have given up half
	// way.
	var v *variants.Variant
	err := cmdutil.Interruptible(opts.Ctx, "the variant was built; nothing was written", func() error {
		// The same defines as 'metalab sites -D', so its site ids resolve here.
		f, err := cmdutil.LoadKernel(opts.ReadFile, opts.File, cmdutil.Macros{Defines: opts.Defines, Undefs: opts.Undefs, IncludeDirs: opts.IncludeDirs})
		if err != nil {
			return err
		}
		cmdutil.PrintWarnings(opts.IO.ErrOut, f)
		if opts.Ctx != nil {
			f.SetContext(opts.Ctx)
		}
		owned, err := mutate.Funcs(f, opts.Fns)
		if err != nil {
			return &cmdutil.FlagError{Err: err}
		}
		// --fn may name a function by its name, Owner::name or a host_name;
		// a site id names it by its name.
		for _, r := range opts.Refs {
			if !slices.ContainsFunc(owned, func(fn *msl.Func) bool { return fn.Name == r.Func }) {
				return cmdutil.FlagErrorf("site %s is in function %s, which is not an --fn", r, r.Func)
			}
		}
		var muts []*mutate.Mutation
		for _, r := range opts.Refs {
			if m := all.Lookup(r.Mutation); m != nil && !slices.Contains(muts, m) {
				muts = append(muts, m)
			}
		}
		geo, err := cmdutil.SpecGeometry(opts.Spec)
		if err != nil {
			return err
		}
		found, _, err := mutate.FindAllWith(f, muts, opts.Fns, mutate.Options{Threads: geo})
		if err != nil {
			return err
		}
		v, err = variants.Build(f, found, opts.Refs)
		return err
	})
	if err != nil {
		return err
	}
	if opts.Output != "" {
		if err := opts.WriteFile(opts.Output, v.Source); err != nil {
			return err
		}
	}
	if opts.JSON {
		out := jsonOut{Name: v.Name, Sha256: v.Sha256, Base: v.BasePath, BaseSha256: v.BaseSha256, Flags: v.Flags.Args(), Edits: v.Edits, Output: opts.Output}
		for _, r := range v.Refs {
			out.Refs = append(out.Refs, r.String())
		}
		if opts.Output == "" {
			out.Source = string(v.Source)
		}
		return cmdutil.WriteJSON(opts.IO.Out, out)
	}
	info := opts.IO.Out
	if opts.Output == "" {
		if _, err := opts.IO.Out.Write(v.Source); err != nil {
			return fmt.Errorf("write variant: %w", err)
		}
		info = opts.IO.ErrOut
	}
	_, err = fmt.Fprintf(info, "variant %s\nsha256 %s\n", v.Name, v.Sha256)
	if err == nil && !v.Flags.IsZero() {
		_, err = fmt.Fprintf(info, "flags %s\n", v.Flags)
	}
	if opts.Output != "" && err == nil {
		_, err = fmt.Fprintf(info, "wrote %s\n", opts.Output)
	}
	return err
}
