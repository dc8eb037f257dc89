// Package diff implements `metalab diff`: write a verified, git-applicable
// patch that turns a base kernel into a variant.
package diff

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
	"metalab/msl"
	"metalab/mutate"
	"metalab/patches"
)

// DiffOptions are the inputs of `metalab diff`.
type DiffOptions struct {
	IO        *cmdutil.IOStreams
	ReadFile  func(string) ([]byte, error)
	WriteFile func(path string, data []byte) error // atomic

	Base    string
	Variant string
	Path    string // path of the kernel in the repository, slash-separated
	Fns     []string
	Repo    string
	Output  string
	JSON    bool
}

// NewCmdDiff returns the diff command; runF, if non-nil, replaces the run
// function.
func NewCmdDiff(f *cmdutil.Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: f.IOStreams, ReadFile: f.ReadFile, WriteFile: cmdutil.WriteFileAtomic}
	cmd := &cobra.Command{
		Use:   "diff <base.metal> <variant.metal> --path REPO/RELATIVE/PATH [flags]",
		Short: "Write a verified patch from a base kernel to a variant",
		Long: `Write the unified diff that turns base into variant, labelled with --path
(the kernel's path relative to the repository root). The patch is checked
with 'git apply --check' before it is written: in --repo, whose copy of the
file must still match base's sha256, or else in a scratch repository. With
--fn, a patch that changes anything outside those functions is refused.
A patch that would not apply is never written. Identical inputs print
"no changes" and write nothing.`,
		Example: "  metalab diff kernels/example.metal /tmp/v.metal --path kernels/example.metal --fn reduce --repo . -o /tmp/v.patch",
		Args:    cmdutil.ExactArgs(2, "<base.metal> <variant.metal>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Base, opts.Variant = args[0], args[1]
			if opts.Path == "" {
				return cmdutil.FlagErrorf("--path is required: the kernel's path relative to the repository root")
			}
			if filepath.IsAbs(opts.Path) || !filepath.IsLocal(filepath.FromSlash(opts.Path)) {
				return cmdutil.FlagErrorf("--path %q must be relative to the repository root", opts.Path)
			}
			if opts.Output != "" && (cmdutil.SameFile(opts.Output, opts.Base) || cmdutil.SameFile(opts.Output, opts.Variant)) {
				return cmdutil.FlagErrorf("-o %s would overwrite an input", opts.Output)
			}
			// The patched file itself: --path inside --repo, or inside the
			// working directory when there is no --repo.
			if target := filepath.Join(opts.Repo, filepath.FromSlash(opts.Path)); opts.Output != "" && cmdutil.SameFile(opts.Output, target) {
				return cmdutil.FlagErrorf("-o %s would overwrite the kernel the patch is for (%s)", opts.Output, target)
			}
			if runF != nil {
				return runF(opts)
			}
			return diffRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Path, "path", "", "the kernel's `PATH` relative to the repository root (required)")
	cmd.Flags().StringArrayVar(&opts.Fns, "fn", nil, "refuse changes outside function `NAME` (repeatable)")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "check against the repository at `DIR` (its top level)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write the patch to `FILE` instead of standard output")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	return cmd
}

type jsonOut struct {
	Path          string `json:"path"`
	Changed       bool   `json:"changed"`
	BaseSha256    string `json:"base_sha256"`
	VariantSha256 string `json:"variant_sha256"`
	Verified      string `json:"verified,omitempty"` // where git apply --check ran: "repo" or "scratch"
	Output        string `json:"output,omitempty"`
	Patch         string `json:"patch,omitempty"` // only without -o
}

func diffRun(ctx context.Context, opts *DiffOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	base, err := opts.ReadFile(opts.Base)
	if err != nil {
		return fmt.Errorf("read base: %w", err)
	}
	vari, err := opts.ReadFile(opts.Variant)
	if err != nil {
		return fmt.Errorf("read variant: %w", err)
	}
	mo := patches.MakeOptions{Path: opts.Path, Fns: opts.Fns, Repo: opts.Repo}
	if len(opts.Fns) > 0 {
		f, err := msl.Parse(opts.Base, base)
		if err != nil {
			return err
		}
		if _, err := mutate.Funcs(f, opts.Fns); err != nil {
			return &cmdutil.FlagError{Err: err}
		}
		mo.File = f
	}
	p, err := patches.Make(ctx, base, vari, mo)
	if err != nil {
		return err
	}
	out := jsonOut{Path: opts.Path, BaseSha256: p.BaseSHA256, VariantSha256: p.VariantSHA256, Verified: p.Verified, Changed: p.Text != ""}
	patch := p.Text
	if patch == "" {
		if opts.JSON {
			return cmdutil.WriteJSON(opts.IO.Out, out)
		}
		_, err := fmt.Fprintln(opts.IO.ErrOut, "no changes")
		return err
	}
	if opts.Output != "" {
		if err := opts.WriteFile(opts.Output, []byte(patch)); err != nil {
			return err
		}
		out.Output = opts.Output
	}
	if opts.JSON {
		if opts.Output == "" {
			out.Patch = patch
		}
		return cmdutil.WriteJSON(opts.IO.Out, out)
	}
	if opts.Output == "" {
		_, err = fmt.Fprint(opts.IO.Out, patch)
		return err
	}
	_, err = fmt.Fprintf(opts.IO.Out, "wrote %s (verified with git apply --check in %s)\n", opts.Output, out.Verified)
	return err
}
