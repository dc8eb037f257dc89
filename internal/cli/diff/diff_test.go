package diff

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
)

func TestNewCmdDiff(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    DiffOptions
		wantErr string
	}{
		{name: "basic", args: []string{"a.metal", "b.metal", "--path", "k/a.metal"}, want: DiffOptions{Base: "a.metal", Variant: "b.metal", Path: "k/a.metal"}},
		{name: "all", args: []string{"a.metal", "b.metal", "--path", "a.metal", "--fn", "k", "--fn", "h", "--repo", "r", "-o", "p.patch", "--json"},
			want: DiffOptions{Base: "a.metal", Variant: "b.metal", Path: "a.metal", Fns: []string{"k", "h"}, Repo: "r", Output: "p.patch", JSON: true}},
		{name: "no_path", args: []string{"a.metal", "b.metal"}, wantErr: "--path is required"},
		{name: "abs_path", args: []string{"a.metal", "b.metal", "--path", "/x/a.metal"}, wantErr: "must be relative"},
		{name: "dotdot_path", args: []string{"a.metal", "b.metal", "--path", "../a.metal"}, wantErr: "must be relative"},
		{name: "one_arg", args: []string{"a.metal", "--path", "a.metal"}, wantErr: "want 2 argument"},
		{name: "clobber", args: []string{"a.metal", "b.metal", "--path", "a.metal", "-o", "b.metal"}, wantErr: "would overwrite an input"},
		{name: "clobber_repo_kernel", args: []string{"a.metal", "b.metal", "--path", "k/x.metal", "--repo", "r", "-o", "r/k/x.metal"}, wantErr: "would overwrite the kernel the patch is for"},
		{name: "clobber_kernel", args: []string{"a.metal", "b.metal", "--path", "k/x.metal", "-o", "./k/x.metal"}, wantErr: "would overwrite the kernel the patch is for"},
		{name: "patch_beside_kernel", args: []string{"a.metal", "b.metal", "--path", "k/x.metal", "--repo", "r", "-o", "k/x.metal"},
			want: DiffOptions{Base: "a.metal", Variant: "b.metal", Path: "k/x.metal", Repo: "r", Output: "k/x.metal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cmdtest.ParseArgs(t, NewCmdDiff, tt.args, tt.wantErr)
			if got == nil {
				return
			}
			if got.Base != tt.want.Base || got.Variant != tt.want.Variant || got.Path != tt.want.Path || strings.Join(got.Fns, ",") != strings.Join(tt.want.Fns, ",") ||
				got.Repo != tt.want.Repo || got.Output != tt.want.Output || got.JSON != tt.want.JSON {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

const base = `inline float h(float x) {
    return x;
}

kernel void k(device float *p [[buffer(0)]]) {
    for (int i = 0; i < 4; ++i) { p[i] = h(0.0f); }
}
`

func runDiff(t *testing.T, opts *DiffOptions, vari string) (string, string, error) {
	t.Helper()
	ios, _, out, errOut := cmdutil.Test()
	opts.IO = ios
	opts.ReadFile = func(name string) ([]byte, error) {
		switch name {
		case "base.metal":
			return []byte(base), nil
		case "v.metal":
			return []byte(vari), nil
		}
		return nil, os.ErrNotExist
	}
	opts.Base, opts.Variant = "base.metal", "v.metal"
	if opts.Path == "" {
		opts.Path = "kernels/k.metal"
	}
	if opts.WriteFile == nil {
		opts.WriteFile = cmdutil.WriteFileAtomic
	}
	err := diffRun(context.Background(), opts)
	return out.String(), errOut.String(), err
}

func TestDiffRun(t *testing.T) {
	vari := strings.Replace(base, "    for", "    #pragma clang loop unroll(full)\n    for", 1)
	out, _, err := runDiff(t, &DiffOptions{Fns: []string{"k"}}, vari)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "diff --git a/kernels/k.metal b/kernels/k.metal\n") || !strings.Contains(out, "+    #pragma clang loop unroll(full)\n") {
		t.Errorf("patch =\n%s", out)
	}

	// Against a real repository, written to a file.
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	if err := os.MkdirAll(filepath.Join(repo, "kernels"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "kernels/k.metal"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	o := filepath.Join(t.TempDir(), "p.patch")
	out, _, err = runDiff(t, &DiffOptions{Repo: repo, Output: o, JSON: true}, vari)
	if err != nil {
		t.Fatal(err)
	}
	var js jsonOut
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if !js.Changed || js.Verified != "repo" || js.Output != o || js.Patch != "" {
		t.Errorf("JSON = %+v", js)
	}
	git(t, repo, "apply", "--check", o)
}

func TestDiffRunNoChanges(t *testing.T) {
	wrote := false
	out, errOut, err := runDiff(t, &DiffOptions{Output: "p.patch", WriteFile: func(string, []byte) error { wrote = true; return nil }}, base)
	if err != nil || out != "" || errOut != "no changes\n" || wrote {
		t.Errorf("identical inputs: out %q, stderr %q, err %v, wrote %v", out, errOut, err, wrote)
	}
}

func TestDiffRunRefusals(t *testing.T) {
	outside := strings.Replace(base, "return x;", "return 2.0f * x;", 1)
	wrote := false
	noWrite := func(string, []byte) error { wrote = true; return nil }
	_, _, err := runDiff(t, &DiffOptions{Fns: []string{"k"}, Output: "p", WriteFile: noWrite}, outside)
	if err == nil || !strings.Contains(err.Error(), "refusing patch: base.metal:2: change outside k") {
		t.Errorf("scope error = %v", err)
	}
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "k.metal"), []byte(base+"// moved on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runDiff(t, &DiffOptions{Path: "k.metal", Repo: repo, Output: "p", WriteFile: noWrite}, outside)
	if err == nil || !strings.Contains(err.Error(), "stale baseline: k.metal has sha256 ") {
		t.Errorf("stale error = %v", err)
	}
	if wrote {
		t.Error("a refused patch was written")
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
