package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"metalab/backend"
	"metalab/internal/cli/cmdutil"
)

func TestRunExitCodes(t *testing.T) {
	files := map[string]string{
		"k.metal":   "kernel void k(device float *p [[buffer(0)]]) {\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n}\n",
		"bad.metal": "kernel void k(device float *p [[buffer(0)]] {\n",
	}
	tests := []struct {
		name       string
		args       []string
		want       ExitCode
		wantStdout string
		wantStderr string
	}{
		{name: "ok", args: []string{"sites", "k.metal"}, want: ExitOK, wantStdout: "drop-barrier/k/0-"},
		{name: "help", args: []string{"--help"}, want: ExitOK, wantStdout: "sites"},
		{name: "unknown_command", args: []string{"frob"}, want: ExitUsage, wantStderr: "Run 'metalab --help' for usage."},
		{name: "unknown_flag", args: []string{"sites", "--frob"}, want: ExitUsage, wantStderr: "metalab: unknown flag: --frob\nRun 'metalab sites --help' for usage."},
		{name: "missing_arg", args: []string{"tgmem"}, want: ExitUsage, wantStderr: "Run 'metalab tgmem --help' for usage."},
		{name: "unknown_fn", args: []string{"mutate", "k.metal", "--fn", "x", "--apply", "drop-barrier/x/0-000000"}, want: ExitUsage, wantStderr: `no function "x"`},
		{name: "malformed", args: []string{"sites", "bad.metal"}, want: ExitError, wantStderr: "bad.metal:1:"},
		{name: "missing_file", args: []string{"sites", "none.metal"}, want: ExitError, wantStderr: "metalab: read kernel: "},
		{name: "stale", args: []string{"mutate", "k.metal", "--fn", "k", "--apply", "drop-barrier/k/0-000000"}, want: ExitRef, wantStderr: "stale site"},
		{name: "unknown_site", args: []string{"mutate", "k.metal", "--fn", "k", "--apply", "drop-barrier/k/3"}, want: ExitRef, wantStderr: "no site drop-barrier/k/3"},
		{name: "other_flags", args: []string{"mutate", "k.metal", "--fn", "k", "-D", "N=2", "--apply", "drop-barrier/k/0"}, want: ExitRef, wantStderr: "was listed with no macro flags but is resolved with -D N=2 (-D N=2 was added)"},
		{name: "conflict", args: []string{"mutate", "k.metal", "--fn", "k", "--apply", "drop-barrier/k/0", "--apply", "drop-barrier/k/0"}, want: ExitConflict, wantStderr: "conflict: a site takes at most one choice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, out, errOut := cmdutil.Test()
			f := &cmdutil.Factory{IOStreams: ios, ReadFile: func(name string) ([]byte, error) {
				if s, ok := files[name]; ok {
					return []byte(s), nil
				}
				return nil, os.ErrNotExist
			}}
			if got := Run(f, tt.args); got != tt.want {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", got, tt.want, errOut)
			}
			if !strings.Contains(out.String(), tt.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantStdout, out)
			}
			if !strings.Contains(errOut.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, errOut)
			}
		})
	}
}

func TestEveryCommandHasJSON(t *testing.T) {
	ios, _, _, _ := cmdutil.Test()
	for _, c := range NewCmdRoot(&cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}).Commands() {
		if c.Name() == "help" {
			continue
		}
		if c.Flags().Lookup("json") == nil {
			t.Errorf("command %s has no --json", c.Name())
		}
	}
}

// TestJSONErrorAfterResult checks where a --json error goes: standard
// output while the command has written nothing there, else standard error
// (standard output keeps one JSON document), as one {"error", "kind"}
// object, with the exit status of the plain error.
func TestJSONErrorAfterResult(t *testing.T) {
	newRoot := func(f *cmdutil.Factory) *cobra.Command {
		root := &cobra.Command{Use: "metalab", SilenceErrors: true, SilenceUsage: true}
		root.SetOut(f.IOStreams.Out)
		root.SetErr(f.IOStreams.ErrOut)
		root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
			return &cmdutil.FlagError{Err: &parseError{err}}
		})
		var asJSON, partial bool
		c := &cobra.Command{Use: "job", RunE: func(cmd *cobra.Command, args []string) error {
			if partial {
				fmt.Fprintln(f.IOStreams.Out, `{"result": 1}`)
			}
			return &backend.EnvError{Op: "job", Err: errors.New("no compiler")}
		}}
		c.Flags().BoolVar(&asJSON, "json", false, "")
		c.Flags().BoolVar(&partial, "partial", false, "")
		root.AddCommand(c)
		return root
	}
	for _, tt := range []struct {
		args             []string
		want             ExitCode
		wantOut, wantErr string
	}{
		{[]string{"job", "--json"}, ExitEnv, "{\n  \"error\": \"job: no compiler\",\n  \"kind\": \"environment\"\n}\n", ""},
		{[]string{"job", "--json", "--partial"}, ExitEnv, "{\"result\": 1}\n", "{\n  \"error\": \"job: no compiler\",\n  \"kind\": \"environment\"\n}\n"},
		{[]string{"job", "--partial"}, ExitEnv, "{\"result\": 1}\n", "metalab: job: no compiler\n"},
		{[]string{"job", "--json=false"}, ExitEnv, "", "metalab: job: no compiler\n"},
		// A bad flag stops parsing: --json is found in the arguments,
		// before "--" only.
		{[]string{"job", "--frob", "--json"}, ExitUsage, "{\n  \"error\": \"unknown flag: --frob\",\n  \"kind\": \"usage\"\n}\n", ""},
		{[]string{"job", "--frob", "--json=0"}, ExitUsage, "", "metalab: unknown flag: --frob\nRun 'metalab job --help' for usage.\n"},
		{[]string{"job", "--frob", "--", "--json"}, ExitUsage, "", "metalab: unknown flag: --frob\nRun 'metalab job --help' for usage.\n"},
	} {
		ios, _, out, errOut := cmdutil.Test()
		f := &cmdutil.Factory{IOStreams: ios, Version: "test"}
		if got := run(f, tt.args, newRoot); got != tt.want {
			t.Errorf("%v: exit %d, want %d", tt.args, got, tt.want)
		}
		if out.String() != tt.wantOut || errOut.String() != tt.wantErr {
			t.Errorf("%v:\nstdout %q\nwant   %q\nstderr %q\nwant   %q", tt.args, out, tt.wantOut, errOut, tt.wantErr)
		}
		var e cmdutil.ErrorJSON
		if js := strings.TrimPrefix(out.String()+errOut.String(), "{\"result\": 1}\n"); strings.HasPrefix(js, "{") {
			if err := json.Unmarshal([]byte(js), &e); err != nil || e.Error == "" || e.Kind == "" {
				t.Errorf("%v: %q is not an error object: %v", tt.args, js, err)
			}
		}
	}
}

// TestJSONErrorKinds checks that every exit status has its kind under
// --json, through the real commands.
func TestJSONErrorKinds(t *testing.T) {
	files := map[string]string{"k.metal": "kernel void k(device float *p [[buffer(0)]]) {\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n}\n"}
	for _, tt := range []struct {
		args []string
		want ExitCode
		kind string
	}{
		{[]string{"sites", "--json"}, ExitUsage, "usage"},
		{[]string{"sites", "none.metal", "--json"}, ExitError, "error"},
		{[]string{"mutate", "k.metal", "--json", "--fn", "k", "--apply", "drop-barrier/k/0", "--apply", "drop-barrier/k/0"}, ExitConflict, "conflict"},
		{[]string{"mutate", "k.metal", "--json", "--fn", "k", "--apply", "drop-barrier/k/3"}, ExitRef, "site-ref"},
		{[]string{"frob", "--json"}, ExitUsage, "usage"},
	} {
		ios, _, out, errOut := cmdutil.Test()
		f := &cmdutil.Factory{IOStreams: ios, ReadFile: func(name string) ([]byte, error) {
			if s, ok := files[name]; ok {
				return []byte(s), nil
			}
			return nil, os.ErrNotExist
		}}
		if got := Run(f, tt.args); got != tt.want {
			t.Errorf("%v: exit %d, want %d", tt.args, got, tt.want)
		}
		var e cmdutil.ErrorJSON
		if err := json.Unmarshal(out.Bytes(), &e); err != nil || e.Kind != tt.kind || e.Error == "" || errOut.Len() != 0 {
			t.Errorf("%v: stdout %q (kind %q, want %q; %v), stderr %q", tt.args, out, e.Kind, tt.kind, err, errOut)
		}
	}
}
