// Package backends implements `metalab backends`: list the backends that
// can compile and run kernels, whether each can run on this machine, and
// why not.
package backends

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"metalab/backend"
	"metalab/backend/all"
	"metalab/backend/metal"
	"metalab/internal/cli/cmdutil"
)

// BackendsOptions are the inputs of `metalab backends`.
type BackendsOptions struct {
	IO       *cmdutil.IOStreams
	Backends func() []backend.Backend // the backends to report; default all.All
	Context  context.Context

	JSON bool
}

// NewCmdBackends returns the backends command; runF, if non-nil, replaces
// the run function.
func NewCmdBackends(f *cmdutil.Factory, runF func(*BackendsOptions) error) *cobra.Command {
	opts := &BackendsOptions{IO: f.IOStreams, Backends: all.All}
	cmd := &cobra.Command{
		Use:   "backends [flags]",
		Short: "List the backends and whether each can run here",
		Long: `List every backend metalab knows (cpu, cuda, metal): whether it can compile
and run kernels on this machine and, if not, exactly what is missing. The cpu
backend needs a C++17 compiler; checking it builds the cpu runner once.

The cpu backend runs kernels in a sandboxed runner process; the line under
the table says how it is confined on this machine (system-call filter,
Landlock, resource limits).

The cpu backend caches its runner and every compiled kernel by content hash
in $METALAB_CACHE, or else metalab/ under the user cache directory
(~/.cache/metalab on Linux). The cache is never pruned; it is always safe to
delete, and the detail column (or cache_dir and cache_bytes in --json) shows
where it is and how large.

On a Mac the metal backend is not called available until a self-test has
passed: it compiles a one-thread kernel with a function constant and
threadgroup memory, dispatches it twice (the second time from a buffer kept
on the GPU), reads its output and the GPU timestamps. Each step is listed
under the table; the first that fails says why, and the row says no. The
detail column says how the Metal device was found, its GPU family and its
thread, threadgroup-memory and buffer limits.`,
		Example: "  metalab backends\n  metalab backends --json",
		Args:    cmdutil.ExactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Context = cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return backendsRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "write JSON")
	return cmd
}

// A Describer is a backend that can say which toolchain and device it
// would use; the backends command prints it for available backends.
type Describer interface {
	Describe() string
}

// A Cacher is a backend that keeps a cache on disk; the backends command
// reports where it is and how large, so a user knows what to delete.
type Cacher interface {
	CacheDir() string
	CacheSize() (int64, error)
}

// A Runnerer is a backend that runs kernels in a child process; the
// backends command starts it and prints how it runs them: fibers, address
// layout and sandbox, as the process itself reports them.
type Runnerer interface {
	Runner(ctx context.Context) (string, error)
}

// A SelfTester is a backend that can prove itself by running a kernel (the
// metal backend); the backends command runs it for available backends and
// lists its steps. A backend whose self-test fails is reported unavailable.
type SelfTester interface {
	SelfTest(ctx context.Context) []metal.Step
}

type jsonBackend struct {
	Name       string `json:"name"`
	Available  bool   `json:"available"`
	Why        string `json:"why,omitempty"`
	Detail     string `json:"detail,omitempty"`
	Runner     string `json:"runner,omitempty"`
	CacheDir   string `json:"cache_dir,omitempty"`
	CacheBytes int64  `json:"cache_bytes,omitempty"`
	// SelfTest lists the self-test's steps, for backends that have one.
	SelfTest []metal.Step `json:"self_test,omitempty"`
}

func backendsRun(opts *BackendsOptions) error {
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	var rows []jsonBackend
	for _, b := range opts.Backends() {
		ok, why := b.Available(ctx)
		row := jsonBackend{Name: b.Name(), Available: ok, Why: why}
		if d, isD := b.(Describer); isD && ok {
			row.Detail = d.Describe()
		}
		if st, isST := b.(SelfTester); isST && ok {
			row.SelfTest = st.SelfTest(ctx)
			for _, s := range row.SelfTest {
				if !s.OK {
					row.Available = false
					row.Why = "self-test failed at " + s.Name + ": " + s.Detail
					break
				}
			}
			if len(row.SelfTest) == 0 {
				row.Available, row.Why = false, "self-test ran no step"
			}
		}
		if r, isR := b.(Runnerer); isR && ok {
			if text, err := r.Runner(ctx); err == nil {
				row.Runner = text
			} else {
				row.Runner = "cannot start: " + err.Error()
			}
		}
		if c, isC := b.(Cacher); isC && ok {
			row.CacheDir = c.CacheDir()
			if n, err := c.CacheSize(); err == nil {
				row.CacheBytes = n
			}
		}
		rows = append(rows, row)
	}
	out := opts.IO.Out
	if opts.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []jsonBackend{}
		}
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tAVAILABLE\tDETAIL")
	for _, r := range rows {
		avail, detail := "yes", r.Detail
		if !r.Available {
			avail, detail = "no", r.Why
			if r.Detail != "" {
				detail += " (" + r.Detail + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, avail, detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Runner != "" {
			fmt.Fprintf(out, "\n%s runner: %s\n", r.Name, r.Runner)
		}
		if len(r.SelfTest) > 0 {
			fmt.Fprintf(out, "\n%s self-test:\n", r.Name)
			for _, s := range r.SelfTest {
				mark := "ok  "
				if !s.OK {
					mark = "FAIL"
				}
				line := fmt.Sprintf("  %s %s", mark, s.Name)
				if s.Detail != "" {
					line += ": " + s.Detail
				}
				fmt.Fprintln(out, line)
			}
		}
	}
	return nil
}
