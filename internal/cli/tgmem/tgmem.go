// Package tgmem implements `metalab tgmem`: report the static threadgroup
// memory of each kernel in a file, declaration by declaration.
package tgmem

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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
	Ctx      context.Context // done on Ctrl-C or SIGTERM: reading stops; nil means never

	File        string
	Fns         []string // kernel function names or host_names; empty means all
	Defines     []string // -D NAME=VALUE
	Undefs      []string // -U NAME
	IncludeDirs []string // -I DIR
	JSON        bool
	Limit       int64 // bytes; 0 means the default Limit
	Gate        bool  // --limit was given: exit 1 when an entry point is over it
	Strict      bool  // --strict: exit 1 also when an entry point's size is unknown
}

// NewCmdTgmem returns the tgmem command; runF, if non-nil, replaces the run
// function.
func NewCmdTgmem(f *cmdutil.Factory, runF func(*TgmemOptions) error) *cobra.Command {
	opts := &TgmemOptions{IO: f.IOStreams, ReadFile: f.ReadFile}
	var limit string
	cmd := &cobra.Command{
		Use:   "tgmem <kernel.metal> [flags]",
		Short: "Report the static threadgroup memory of each kernel",
		Long: `For each kernel (and each host_name instantiation of a template kernel),
list its threadgroup declarations and those of the helpers it calls, with
type, size, alignment and offset, the [[threadgroup(n)]] parameters whose
size the host sets, and the total against the limit (16 KiB unless
--limit says otherwise). The total is what the compiler allocates: the
declarations placed in order at their alignment, rounded up to a multiple
of 16 bytes. A size that cannot be computed is shown as unknown, with why;
a total whose known part is already over the limit is reported over.

With --limit, the command exits 1 when any entry point is over the limit,
and with --strict also when one's size is unknown, so it can gate a review.
Kernels written inside #define bodies and instantiations made by macros are
entry points like any other; headers read through -I give their sizes.`,
		Example: "  metalab tgmem kernels/example.metal\n  metalab tgmem kernels/example.metal --fn reduce -D TG_SIZE=128\n  metalab tgmem ggml-metal.metal -I include --limit 16KiB --strict",
		Args:    cmdutil.ExactArgs(1, "<kernel.metal>"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File, opts.Ctx = args[0], cmd.Context()
			if err := cmdutil.CheckMacros(opts.Defines, opts.Undefs); err != nil {
				return err
			}
			if limit != "" {
				n, err := ParseSize(limit)
				if err != nil {
					return cmdutil.FlagErrorf("bad --limit %q: %v", limit, err)
				}
				opts.Limit, opts.Gate = n, true
			}
			if runF != nil {
				return runF(opts)
			}
			return tgmemRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Fns, "fn", nil, "only kernel `NAME` (function, Owner::function or host_name; repeatable)")
	cmd.Flags().StringVar(&limit, "limit", "", "exit 1 when an entry point's static threadgroup memory exceeds `SIZE` (bytes, or with a KiB suffix: 16KiB, 32KiB); the default limit shown is 16KiB")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "exit 1 also when an entry point's size is unknown")
	cmdutil.AddMacroFlags(cmd.Flags(), &opts.Defines, &opts.Undefs, &opts.IncludeDirs)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	return cmd
}

// ParseSize parses a byte count: 16384, 16384B, 16KiB, 16K or 1MiB.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"K", 1 << 10}, {"k", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > 1<<40/mult {
		return 0, fmt.Errorf("want a positive byte count such as 16384 or 16KiB")
	}
	return n * mult, nil
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
	Macro    string     `json:"macro,omitempty"` // the macro whose use writes the kernel
	Decls    []jsonDecl `json:"decls"`
	HostSet  []jsonHost `json:"host_set,omitempty"`
	Known    bool       `json:"known"`
	Declared int64      `json:"declared"` // bytes up to the end of the last known declaration, before rounding
	Total    int64      `json:"total"`    // declared rounded up to 16; with known false, a lower bound
	Limit    int64      `json:"limit"`
	Over     bool       `json:"over"` // total is over the limit (known or not)
}

type jsonOut struct {
	File    string       `json:"file"`
	Kernels []jsonKernel `json:"kernels"`
}

func tgmemRun(opts *TgmemOptions) error {
	var f *msl.File
	err := cmdutil.Interruptible(opts.Ctx, opts.File+" was read", func() error {
		var err error
		f, err = cmdutil.LoadKernel(opts.ReadFile, opts.File, cmdutil.Macros{Defines: opts.Defines, Undefs: opts.Undefs, IncludeDirs: opts.IncludeDirs})
		return err
	})
	if err != nil {
		return err
	}
	cmdutil.PrintWarnings(opts.IO.ErrOut, f)
	limit := opts.Limit
	if limit <= 0 {
		limit = Limit
	}
	eps := f.EntryPoints()
	var targets []msl.EntryPoint
	var names []string
	for _, ep := range eps {
		names = append(names, ep.Name)
		if len(opts.Fns) == 0 || slices.ContainsFunc(opts.Fns, func(n string) bool { return matches(ep, n) }) {
			targets = append(targets, ep)
		}
	}
	for _, n := range opts.Fns {
		if !slices.ContainsFunc(eps, func(ep msl.EntryPoint) bool { return matches(ep, n) }) {
			return cmdutil.FlagErrorf("no kernel %q in %s (kernels: %s)", n, opts.File, strings.Join(names, ", "))
		}
	}
	out := jsonOut{File: opts.File, Kernels: []jsonKernel{}}
	fail := false
	for _, ep := range targets {
		// The file's own #defines win over -D, as with the compiler; the
		// File keeps -D for the names it does not define.
		m, err := msl.ThreadgroupMemory(f, ep.Name, msl.Env{File: f})
		if err != nil {
			return fmt.Errorf("threadgroup memory of %s: %w", ep.Name, err)
		}
		jk := jsonKernel{Kernel: ep.Name, Function: msl.QualifiedName(ep.Func), Decls: []jsonDecl{}, Known: m.Known, Declared: m.Declared, Total: m.Total, Limit: limit, Over: m.Total > limit}
		if ep.Expansion != nil {
			jk.Macro = ep.Expansion.Macro
		}
		for _, d := range m.Decls {
			df := f.FileOf(d.FuncPtr)
			jd := jsonDecl{Function: d.Func, Name: d.Name, Type: d.FullType(), ElemType: d.Type, Dims: d.Dims, Line: f.Position(df.OriginPos(d.Pos)).Line, Known: d.Known, Why: d.Why}
			if df != f && df.Root() != f {
				jd.Line = 0 // in a header
			}
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
		if opts.Gate && jk.Over || opts.Strict && !jk.Known {
			fail = true
		}
		out.Kernels = append(out.Kernels, jk)
	}
	if opts.JSON {
		if err := cmdutil.WriteJSON(opts.IO.Out, out); err != nil {
			return err
		}
		if fail {
			return cmdutil.ErrSilent
		}
		return nil
	}
	w := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	rounded := false
	for i, k := range out.Kernels {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := k.Kernel
		switch {
		case k.Macro != "":
			title = fmt.Sprintf("%s (written by macro %s)", k.Kernel, k.Macro)
		case k.Function != k.Kernel:
			title = fmt.Sprintf("%s (instantiation of %s)", k.Kernel, k.Function)
		}
		round := ""
		if k.Total != k.Declared {
			round = fmt.Sprintf("; %d declared, rounded up to a multiple of 16", k.Declared)
			rounded = true
		}
		switch {
		case !k.Known && k.Over:
			fmt.Fprintf(w, "kernel %s: at least %d bytes, OVER the %d-byte limit (some sizes unknown)\n", title, k.Total, k.Limit)
		case !k.Known:
			fmt.Fprintf(w, "kernel %s: total unknown (limit %d)\n", title, k.Limit)
		case k.Over:
			fmt.Fprintf(w, "kernel %s: %d bytes, OVER the %d-byte limit%s\n", title, k.Total, k.Limit, round)
		default:
			fmt.Fprintf(w, "kernel %s: %d bytes (limit %d%s)\n", title, k.Total, k.Limit, round)
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
	if rounded {
		fmt.Fprintln(w, "\nMetal allocates threadgroup memory in multiples of 16 bytes: the totals are the declarations rounded up.")
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if fail {
		return cmdutil.ErrSilent
	}
	return nil
}

// matches reports whether --fn name names entry point ep: its host name,
// its function's name or its qualified name.
func matches(ep msl.EntryPoint, name string) bool {
	return ep.Name == name || ep.Func.Name == name || msl.QualifiedName(ep.Func) == name
}
