package tgmem

import (
	"encoding/json"
	"strings"
	"testing"

	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
)

func TestNewCmdTgmem(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    TgmemOptions
		wantErr string
	}{
		{name: "basic", args: []string{"k.metal"}, want: TgmemOptions{File: "k.metal"}},
		{name: "all", args: []string{"k.metal", "--fn", "k", "-D", "N=4", "-DM=8", "--define", "X", "--json"},
			want: TgmemOptions{File: "k.metal", Fns: []string{"k"}, Defines: []string{"N=4", "M=8", "X"}, JSON: true}},
		{name: "bad_define", args: []string{"k.metal", "-D", "4=x"}, wantErr: "bad -D"},
		{name: "no_file", args: nil, wantErr: "want 1 argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cmdtest.ParseArgs(t, NewCmdTgmem, tt.args, tt.wantErr)
			if got == nil {
				return
			}
			if got.File != tt.want.File || strings.Join(got.Fns, ",") != strings.Join(tt.want.Fns, ",") ||
				strings.Join(got.Defines, ",") != strings.Join(tt.want.Defines, ",") || got.JSON != tt.want.JSON {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

const kernel = `#ifndef N
#define N 64
#endif
kernel void k(device float *p [[buffer(0)]], threadgroup float *scratch [[threadgroup(0)]], uint t [[thread_index_in_threadgroup]]) {
    threadgroup float a[N];
    threadgroup half b[3];
    a[t] = p[t];
    b[0] = 0;
    scratch[t] = a[t];
}
`

func runTgmem(t *testing.T, opts *TgmemOptions) (string, error) {
	t.Helper()
	ios, _, out, _ := cmdutil.Test()
	opts.IO = ios
	opts.File = "k.metal"
	opts.ReadFile = func(string) ([]byte, error) { return []byte(kernel), nil }
	err := tgmemRun(opts)
	return out.String(), err
}

func TestTgmemRun(t *testing.T) {
	out, err := runTgmem(t, &TgmemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kernel k: 272 bytes (limit 16384; 262 declared, rounded up to a multiple of 16)", "a     float[64]  256", "b     half[3]    6", "host-set [[threadgroup(0)]]", "scratch"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = runTgmem(t, &TgmemOptions{Defines: []string{"N=8192"}, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var js jsonOut
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if len(js.Kernels) != 1 || len(js.Kernels[0].Decls) != 2 || js.Kernels[0].Decls[0].Size != 32768 || js.Kernels[0].Total <= Limit {
		t.Errorf("JSON = %+v", js)
	} else if d := js.Kernels[0].Decls[0]; d.Type != "float[8192]" || d.ElemType != "float" || strings.Join(d.Dims, ",") != "8192" {
		t.Errorf("JSON decl type = %q, element type %q, dims %q; want float[8192], float, [8192]", d.Type, d.ElemType, d.Dims)
	}
	if _, err := runTgmem(t, &TgmemOptions{Fns: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "kernels: k") {
		t.Errorf("unknown kernel error = %v", err)
	}
}
