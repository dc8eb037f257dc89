// Package tgmem implements `metalab tgmem`: report the static threadgroup
// memory of each kernel in a file, declaration by declaration.
package tgmem

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
	"metalab/msl"
)

// Limit is the static threadgroup memory a Metal kernel may use, in bytes.
const Limit = 16 << 10

// TgmemOptions are the inputs of `metalab tgmem`.
type TgmemOptions struct {
	IO       *cmdutil.IOStreams
	ReadFile func(string) ([]byte, error)

	File        string
	Fns         []string // kernel function names or host_names; empty means all
	Defines     []string // -D NAME=VALUE
	Undefs      []string // -U NAME
	IncludeDirs []string // -I DIR
	JSON        bool
}

// NewCmdTgmem returns the tgmem command; runF, if non-nil, replaces the run
// function.
func NewCmdTgmem(f *cmdutil.Factory, runF func(*TgmemOptions) error) *cobra.Command {
	opts := &TgmemOptions{IO: f.IOStreams, ReadFile: f.ReadFile}
	cmd := &cobra.Command{
		Use:   "tgmem <kernel.metal> [flags]",
		Short: "Report the static threadgroup memory of each kernel",
		Long: `For each kernel (and each host_name instantiation of a template kernel),
list its threadgroup declarations and those of the helpers it calls, with
type, size, alignment and offset, the [[threadgroup(n)]] parameters whose
size the host sets, and the total against the 16 KiB limit. A size that
cannot be computed is shown as unknown, with why.`,
		Example: "  metalab tgmem kernels/example.metal\n  metalab tgmem kernels/example.metal --fn reduce -D TG_SIZE=128",
		Args:    cmdutil.ExactArgs(1, "<kernel.metal>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := cmdutil.CheckMacros(opts.Defines, opts.Undefs); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return tgmemRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Fns, "fn", nil, "only kernel `NAME` (function or host_name; repeatable)")
	cmdutil.AddMacroFlags(cmd.Flags(), &opts.Defines, &opts.Undefs, &opts.IncludeDirs)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	return cmd
}

type jsonDecl struct {
	Function string   `json:"function"`
	Name     string   `json:"name"`
	Type     string   `json:"type"`         // declared type with dimensions: float[4][64]
	ElemType string   `json:"element_type"` // float
	Dims     []string `json:"dims"`         // evaluated dimensions, or their source text where unknown
	Line     int      `json:"line"`
	Known    bool     `json:"known"`
	Size     int64    `json:"size"`
	Align    int64    `json:"align"`
	Offset   int64    `json:"offset"`
	Why      string   `json:"why,omitempty"`
}

type jsonHost struct {
	Index int64  `json:"index"`
	Name  string `json:"name"`
	Type  string `json:"type"`
}

type jsonKernel struct {
	Kernel   string     `json:"kernel"`
	Function string     `json:"function"`
	Decls    []jsonDecl `json:"decls"`
	HostSet  []jsonHost `json:"host_set,omitempty"`
	Known    bool       `json:"known"`
	Total    int64      `json:"total"`
	Limit    int64      `json:"limit"`
}

type jsonOut struct {
	File    string       `json:"file"`
	Kernels []jsonKernel `json:"kernels"`
}

func tgmemRun(opts *TgmemOptions) error {
	f, err := cmdutil.LoadKernel(opts.ReadFile, opts.File, cmdutil.Macros{Defines: opts.Defines, Undefs: opts.Undefs, IncludeDirs: opts.IncludeDirs})
	if err != nil {
		return err
	}
	cmdutil.PrintWarnings(opts.IO.ErrOut, f)
	// Each kernel, or each host_name instantiation of a template kernel.
	type target struct{ name, fn string }
	var targets, all []target
	for _, k := range f.Kernels() {
		n := 0
		for _, in := range f.Instantiations {
			if in.Func == k.Name && in.HostName != "" {
				all = append(all, target{in.HostName, k.Name})
				n++
			}
		}
		if n == 0 {
			all = append(all, target{k.Name, k.Name})
		}
	}
	var names []string
	for _, t := range all {
		names = append(names, t.name)
		if len(opts.Fns) == 0 || slices.Contains(opts.Fns, t.name) || slices.Contains(opts.Fns, t.fn) {
			targets = append(targets, t)
		}
	}
	for _, n := range opts.Fns {
		if !slices.ContainsFunc(all, func(t target) bool { return t.name == n || t.fn == n }) {
			return cmdutil.FlagErrorf("no kernel %q in %s (kernels: %s)", n, opts.File, strings.Join(names, ", "))
		}
	}
	out := jsonOut{File: opts.File, Kernels: []jsonKernel{}}
	for _, t := range targets {
		m, err := msl.ThreadgroupMemory(f, t.name, msl.Env{File: f, Defines: f.CmdDefines})
		if err != nil {
			return fmt.Errorf("threadgroup memory of %s: %w", t.name, err)
		}
		jk := jsonKernel{Kernel: t.name, Function: t.fn, Decls: []jsonDecl{}, Known: m.Known, Total: m.Total, Limit: Limit}
		for _, d := range m.Decls {
			jd := jsonDecl{Function: d.Func, Name: d.Name, Type: d.FullType(), ElemType: d.Type, Dims: d.Dims, Line: f.Position(d.Pos).Line, Known: d.Known, Why: d.Why}
			if d.Known {
				jd.Size, jd.Align, jd.Offset = d.Size, d.Align, d.Offset
			}
			if jd.Dims == nil {
				jd.Dims = []string{}
			}
			jk.Decls = append(jk.Decls, jd)
		}
		for _, h := range m.HostSet {
			jk.HostSet = append(jk.HostSet, jsonHost{Index: h.Index, Name: h.Name, Type: h.Type})
		}
		out.Kernels = append(out.Kernels, jk)
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, out)
	}
	w := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	for i, k := range out.Kernels {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := k.Kernel
		if k.Function != k.Kernel {
			title = fmt.Sprintf("%s (instantiation of %s)", k.Kernel, k.Function)
		}
		switch {
		case !k.Known:
			fmt.Fprintf(w, "kernel %s: total unknown (limit %d)\n", title, k.Limit)
		case k.Total > k.Limit:
			fmt.Fprintf(w, "kernel %s: %d bytes, OVER the %d-byte limit\n", title, k.Total, k.Limit)
		default:
			fmt.Fprintf(w, "kernel %s: %d bytes (limit %d)\n", title, k.Total, k.Limit)
		}
		if len(k.Decls) > 0 {
			fmt.Fprintln(w, "  FUNCTION\tNAME\tTYPE\tSIZE\tALIGN\tOFFSET")
		}
		for _, d := range k.Decls {
			if d.Known {
				fmt.Fprintf(w, "  %s\t%s\t%s\t%d\t%d\t%d\n", d.Function, d.Name, d.Type, d.Size, d.Align, d.Offset)
			} else {
				fmt.Fprintf(w, "  %s\t%s\t%s\tunknown\t\t\t(%s)\n", d.Function, d.Name, d.Type, d.Why)
			}
		}
		for _, h := range k.HostSet {
			idx := fmt.Sprint(h.Index)
			if h.Index < 0 {
				idx = "?"
			}
			fmt.Fprintf(w, "  host-set [[threadgroup(%s)]] %s %s\n", idx, h.Type, h.Name)
		}
	}
	return w.Flush()
}
