package cli

import (
	"os"
	"strings"
	"testing"

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
