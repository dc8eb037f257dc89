package mutate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/all"
)

func TestNewCmdMutate(t *testing.T) {
	ref := "unroll-pragma/k/0-abcdef"
	tests := []struct {
		name    string
		args    []string
		want    MutateOptions
		wantErr string
	}{
		{name: "basic", args: []string{"k.metal", "--fn", "k", "--apply", ref}, want: MutateOptions{File: "k.metal", Fns: []string{"k"}, Apply: []string{ref}}},
		{name: "all", args: []string{"k.metal", "--fn", "k", "--apply", ref + "=full", "--apply", "drop-barrier/k/1-000000", "-o", "v.metal", "--json"},
			want: MutateOptions{File: "k.metal", Fns: []string{"k"}, Apply: []string{ref + "=full", "drop-barrier/k/1-000000"}, Output: "v.metal", JSON: true}},
		{name: "no_fn", args: []string{"k.metal", "--apply", ref}, wantErr: "--fn is required"},
		{name: "no_apply", args: []string{"k.metal", "--fn", "k"}, wantErr: "--apply is required"},
		{name: "bad_ref", args: []string{"k.metal", "--fn", "k", "--apply", "unroll-pragma/k/x0"}, wantErr: "bad site"},
		{name: "ref_without_hash", args: []string{"k.metal", "--fn", "k", "--apply", "unroll-pragma/k/0=full"},
			want: MutateOptions{File: "k.metal", Fns: []string{"k"}, Apply: []string{"unroll-pragma/k/0=full"}}},
		{name: "unknown_mutation", args: []string{"k.metal", "--fn", "k", "--apply", "vectorize/k/0-abcdef"}, wantErr: `unknown mutation "vectorize"`},
		{name: "clobber", args: []string{"k.metal", "--fn", "k", "--apply", ref, "-o", "./k.metal"}, wantErr: "would overwrite the kernel source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cmdtest.ParseArgs(t, NewCmdMutate, tt.args, tt.wantErr)
			if got == nil {
				return
			}
			if got.File != tt.want.File || strings.Join(got.Fns, ",") != strings.Join(tt.want.Fns, ",") ||
				strings.Join(got.Apply, ",") != strings.Join(tt.want.Apply, ",") || got.Output != tt.want.Output || got.JSON != tt.want.JSON {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
			if len(got.Refs) != len(got.Apply) {
				t.Errorf("Refs = %v", got.Refs)
			}
		})
	}
}

const kernel = `kernel void k(device float *p [[buffer(0)]]) {
    for (int i = 0; i < 4; ++i) { p[i] = 0; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
struct Op {
    float operator()(float x) const { return x; }
};
`

// ids returns the site ids of kernel of unroll-pragma, then drop-barrier.
func ids(t *testing.T) []string {
	t.Helper()
	f, err := msl.Parse("k.metal", []byte(kernel))
	if err != nil {
		t.Fatal(err)
	}
	found, err := mutate.Find(f, []*mutate.Mutation{all.Lookup("unroll-pragma"), all.Lookup("drop-barrier")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range found {
		out = append(out, s.ID)
	}
	return out
}

func runMutate(t *testing.T, opts *MutateOptions) (string, string, error) {
	t.Helper()
	ios, _, out, errOut := cmdutil.Test()
	opts.IO = ios
	opts.ReadFile = func(string) ([]byte, error) { return []byte(kernel), nil }
	if opts.WriteFile == nil {
		opts.WriteFile = cmdutil.WriteFileAtomic
	}
	if opts.Fns == nil {
		opts.Fns = []string{"k"}
	}
	for _, a := range opts.Apply {
		r, err := mutate.ParseSiteRef(a)
		if err != nil {
			t.Fatal(err)
		}
		opts.Refs = append(opts.Refs, r)
	}
	err := mutateRun(opts)
	return out.String(), errOut.String(), err
}

func TestMutateRun(t *testing.T) {
	id := ids(t)
	out, errOut, err := runMutate(t, &MutateOptions{File: "k.metal", Apply: []string{id[0] + "=count2", id[1]}})
	if err != nil {
		t.Fatal(err)
	}
	want := "kernel void k(device float *p [[buffer(0)]]) {\n    #pragma clang loop unroll_count(2)\n    for (int i = 0; i < 4; ++i) { p[i] = 0; }\n}\nstruct Op {\n    float operator()(float x) const { return x; }\n};\n"
	if out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	if !strings.HasPrefix(errOut, "variant drop-barrier.k.0=drop+unroll-pragma.k.0=count2-") || !strings.Contains(errOut, "\nsha256 ") {
		t.Errorf("stderr = %q", errOut)
	}

	dir := t.TempDir()
	o := filepath.Join(dir, "v.metal")
	out, errOut, err = runMutate(t, &MutateOptions{File: "k.metal", Apply: []string{id[1]}, Output: o, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var js jsonOut
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	data, err := os.ReadFile(o)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "barrier") || js.Output != o || js.Source != "" || len(js.Refs) != 1 || js.Refs[0] != id[1]+"=drop" || errOut != "" {
		t.Errorf("JSON = %+v, file = %q, stderr = %q", js, data, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestMutateRunErrors(t *testing.T) {
	id := ids(t)
	_, _, err := runMutate(t, &MutateOptions{File: "k.metal", Apply: []string{id[0] + "=full", id[0] + "=disable"}})
	if err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("conflict error = %v", err)
	}
	stale := id[0][:len(id[0])-6] + "ffffff"
	_, _, err = runMutate(t, &MutateOptions{File: "k.metal", Apply: []string{stale}})
	if err == nil || !strings.Contains(err.Error(), "stale site") {
		t.Errorf("stale error = %v", err)
	}
	// A site of a function that is not an --fn: Op::operator() is a
	// function of the file with no sites, k is not owned.
	_, _, err = runMutate(t, &MutateOptions{File: "k.metal", Fns: []string{"Op::operator()"}, Apply: []string{id[0]}})
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "not an --fn") {
		t.Errorf("other --fn error = %v, want a FlagError containing \"not an --fn\"", err)
	}
	wrote := false
	_, _, err = runMutate(t, &MutateOptions{File: "k.metal", Apply: []string{stale}, Output: "x", WriteFile: func(string, []byte) error { wrote = true; return nil }})
	if err == nil || wrote {
		t.Errorf("failed mutate wrote output (err %v)", err)
	}
}

// TestMutateRunFlags checks that a ref listed under -D resolves under the
// same -D, is refused with a *mutate.FlagsError under others, and that
// the variant records the flags.
func TestMutateRunFlags(t *testing.T) {
	src := "kernel void k(device float *p [[buffer(0)]]) {\n    for (int i = 0; i < N; ++i) { p[i] = 0; }\n}\n"
	f, err := msl.ParseOptions("k.metal", []byte(src), msl.Options{Defines: map[string]string{"N": "4"}})
	if err != nil {
		t.Fatal(err)
	}
	found, err := mutate.Find(f, []*mutate.Mutation{all.Lookup("unroll")}, nil)
	if err != nil || len(found) != 1 {
		t.Fatalf("sites: %v %v", found, err)
	}
	id := found[0].ID
	if !strings.HasSuffix(id, "@N:4") {
		t.Fatalf("id %s lacks the flags", id)
	}
	run := func(defines []string) (string, error) {
		ios, _, out, _ := cmdutil.Test()
		r, err := mutate.ParseSiteRef(id + "=full")
		if err != nil {
			t.Fatal(err)
		}
		opts := &MutateOptions{IO: ios, ReadFile: func(string) ([]byte, error) { return []byte(src), nil }, WriteFile: cmdutil.WriteFileAtomic,
			File: "k.metal", Fns: []string{"k"}, Refs: []mutate.SiteRef{r}, Defines: defines, JSON: true}
		err = mutateRun(opts)
		return out.String(), err
	}
	out, err := run([]string{"N=4"})
	if err != nil {
		t.Fatal(err)
	}
	var js jsonOut
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if strings.Join(js.Flags, " ") != "-D N=4" || !strings.Contains(js.Source, "p[3] = 0") {
		t.Errorf("JSON = %+v", js)
	}
	_, err = run([]string{"N=8"})
	var fe *mutate.FlagsError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "-D N=4 is now -D N=8") {
		t.Errorf("other flags: %v", err)
	}
	_, err = run(nil)
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "-D N=4 was dropped") {
		t.Errorf("no flags: %v", err)
	}
}
