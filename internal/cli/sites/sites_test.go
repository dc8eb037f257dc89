package sites

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
)

func TestNewCmdSites(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    SitesOptions
		wantErr string
	}{
		{name: "file", args: []string{"k.metal"}, want: SitesOptions{File: "k.metal"}},
		{name: "all_flags", args: []string{"k.metal", "--fn", "a", "--fn=b", "--op", "drop-barrier", "--why", "--json"},
			want: SitesOptions{File: "k.metal", Fns: []string{"a", "b"}, Ops: []string{"drop-barrier"}, Why: true, JSON: true}},
		{name: "no_file", args: nil, wantErr: "want 1 argument"},
		{name: "two_files", args: []string{"a", "b"}, wantErr: "want 1 argument"},
		{name: "defines", args: []string{"k.metal", "-D", "BLOCK=64", "--define", "FAST"},
			want: SitesOptions{File: "k.metal", Defines: []string{"BLOCK=64", "FAST"}}},
		{name: "bad_define", args: []string{"k.metal", "-D", "=3"}, wantErr: `bad -D "=3"`},
		{name: "unknown_op", args: []string{"k.metal", "--op", "vectorize"}, wantErr: `unknown --op "vectorize" (mutations: unroll-pragma, unroll, hoist, preadd, split-partials, cross-barrier, merge-barriers, elide-barrier, drop-barrier)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cmdtest.ParseArgs(t, NewCmdSites, tt.args, tt.wantErr)
			if got == nil {
				return
			}
			if got.File != tt.want.File || strings.Join(got.Fns, ",") != strings.Join(tt.want.Fns, ",") ||
				strings.Join(got.Ops, ",") != strings.Join(tt.want.Ops, ",") || got.Why != tt.want.Why || got.JSON != tt.want.JSON ||
				strings.Join(got.Defines, ",") != strings.Join(tt.want.Defines, ",") {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

const kernel = `#define HIDE_LOOP(n) for (int i = 0; i < n; ++i) {}
kernel void k(device float *p [[buffer(0)]]) {
    for (int i = 0; i < 4; ++i) { p[i] = 0; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    HIDE_LOOP(3);
}
`

func run(t *testing.T, opts *SitesOptions, src string) (string, string, error) {
	t.Helper()
	ios, _, out, errOut := cmdutil.Test()
	opts.IO = ios
	opts.ReadFile = func(name string) ([]byte, error) {
		if name != "k.metal" {
			return nil, os.ErrNotExist
		}
		return []byte(src), nil
	}
	err := sitesRun(opts)
	return out.String(), errOut.String(), err
}

func TestSitesRun(t *testing.T) {
	out, _, err := run(t, &SitesOptions{File: "k.metal", Why: true}, kernel)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"unroll-pragma/k/0-", "3:5", "trip count 4", "full,count2,count4,disable", "drop-barrier/k/0-", "4:5", "SKIPPED", "loop hidden behind macro HIDE_LOOP"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, &SitesOptions{File: "k.metal", Ops: []string{"drop-barrier"}, JSON: true}, kernel)
	if err != nil {
		t.Fatal(err)
	}
	var js jsonOut
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if len(js.Sites) != 1 || js.Sites[0].Mutation != "drop-barrier" || js.Sites[0].Line != 4 || js.Sites[0].Choices[0].Name != "drop" || js.Skips != nil {
		t.Errorf("JSON = %+v", js)
	}
	// With --why the skips key is always there, [] when nothing was skipped.
	out, _, err = run(t, &SitesOptions{File: "k.metal", Ops: []string{"drop-barrier"}, Why: true, JSON: true}, kernel)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"skips": []`) {
		t.Errorf("--why --json with no skips lacks \"skips\": []:\n%s", out)
	}
}

func TestSitesRunErrors(t *testing.T) {
	_, _, err := run(t, &SitesOptions{File: "k.metal", Fns: []string{"nope"}}, kernel)
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "functions: k") {
		t.Errorf("unknown --fn error = %v", err)
	}
	_, _, err = run(t, &SitesOptions{File: "missing.metal"}, kernel)
	if err == nil || !strings.Contains(err.Error(), "read kernel") {
		t.Errorf("missing file error = %v", err)
	}
	_, _, err = run(t, &SitesOptions{File: "k.metal"}, "kernel void k( {\n")
	if err == nil || !strings.Contains(err.Error(), "k.metal:1:") {
		t.Errorf("malformed kernel error = %v, want positioned", err)
	}
}

const definedKernel = `kernel void k(device float *p [[buffer(0)]]) {
    for (int i = 0; i < BLOCK; ++i) { p[i] = 0; }
#ifdef USE_BARRIER
    threadgroup_barrier(mem_flags::mem_threadgroup);
#else
    simdgroup_barrier(mem_flags::mem_none);
#endif
}
`

// TestSitesRunDefines checks that -D gives trip counts that depend on a
// define and drops the #if branches it decides.
func TestSitesRunDefines(t *testing.T) {
	out, _, err := run(t, &SitesOptions{File: "k.metal"}, definedKernel)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"trip count unknown", "threadgroup_barrier", "simdgroup_barrier"} {
		if !strings.Contains(out, want) {
			t.Errorf("without -D, output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, &SitesOptions{File: "k.metal", Defines: []string{"BLOCK=8", "USE_BARRIER"}}, definedKernel)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "trip count 8") || !strings.Contains(out, "count8") || !strings.Contains(out, "threadgroup_barrier") || strings.Contains(out, "simdgroup_barrier") {
		t.Errorf("with -D BLOCK=8 -D USE_BARRIER:\n%s", out)
	}
	_, _, err = run(t, &SitesOptions{File: "k.metal", Defines: []string{"1X=2"}}, definedKernel)
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) {
		t.Errorf("bad define error = %v, want a FlagError", err)
	}
}

// TestSitesRunFlags checks that sites listed under -D/-U say so, in the
// table and in JSON, and that their ids carry the flags.
func TestSitesRunFlags(t *testing.T) {
	out, _, err := run(t, &SitesOptions{File: "k.metal", Defines: []string{"BLOCK=8"}, Undefs: []string{"USE_BARRIER"}}, definedKernel)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "macro flags: -D BLOCK=8 -U USE_BARRIER\n") || !strings.Contains(out, "@BLOCK:8,-USE_BARRIER ") {
		t.Errorf("table:\n%s", out)
	}
	out, _, err = run(t, &SitesOptions{File: "k.metal", Defines: []string{"BLOCK=8"}, JSON: true}, definedKernel)
	if err != nil {
		t.Fatal(err)
	}
	var js jsonOut
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if strings.Join(js.Flags, " ") != "-D BLOCK=8" || len(js.Sites) == 0 || !strings.HasSuffix(js.Sites[0].ID, "@BLOCK:8") {
		t.Errorf("JSON = %+v", js)
	}
	out, _, err = run(t, &SitesOptions{File: "k.metal"}, definedKernel)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "macro flags") || strings.Contains(out, "@") {
		t.Errorf("without flags:\n%s", out)
	}
}
