package run

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
	"metalab/backend/fake"
	"metalab/check"
	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
	"metalab/internal/npy"
)

func TestNewCmdRun(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    RunOptions
		wantErr string
	}{
		{name: "defaults", args: "k.yaml --dump d", want: RunOptions{Spec: "k.yaml", Dump: "d", Backend: "cpu"}},
		{name: "everything", args: "k.yaml --dump d --cases quick,edge --case quick/N=4 --case N=8 --variant v.metal --json --timeout 2m",
			want: RunOptions{Spec: "k.yaml", Dump: "d", Backend: "cpu", Sets: []string{"quick", "edge"}, Cases: []string{"quick/N=4", "N=8"}, Variant: "v.metal", JSON: true}},
		{name: "no dump", args: "k.yaml", wantErr: "--dump DIR is required"},
		{name: "no spec", args: "--dump d", wantErr: "want 1 argument"},
		{name: "negative timeout", args: "k.yaml --dump d --timeout -1s", wantErr: "want a positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cmdtest.ParseArgs(t, NewCmdRun, strings.Fields(tt.args), tt.wantErr)
			if got == nil {
				return
			}
			if got.Spec != tt.want.Spec || got.Dump != tt.want.Dump || got.Backend != tt.want.Backend || got.Variant != tt.want.Variant ||
				got.JSON != tt.want.JSON || strings.Join(got.Sets, ",") != strings.Join(tt.want.Sets, ",") ||
				strings.Join(got.Cases, ",") != strings.Join(tt.want.Cases, ",") {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

const testSpec = `source: k.metal
buffers:
  - {name: in, index: 0, type: float, count: N, role: input, gen: {kind: iota}}
  - {name: out, index: 1, type: float, count: N, shape: [2, N / 2], role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [N]}
sets:
  quick:
    cases: [{N: 4}, {N: 8}]
  big:
    cases: [{N: 64}]
`

// testKernel is a kernel the spec fits, whose fake backend markers copy
// in to out.
const testKernel = `// fake: copy 0 1
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    out[i] = in[i];
}
`

type fixture struct {
	dir, spec string
	ios       *cmdutil.IOStreams
	out, errs interface{ String() string }
}

func setup(t *testing.T, specText, kernel string) *fixture {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"k.yaml": specText, "k.metal": kernel} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ios, _, out, errs := cmdutil.Test()
	return &fixture{dir: dir, spec: filepath.Join(dir, "k.yaml"), ios: ios, out: out, errs: errs}
}

func (f *fixture) opts(dump string, mod func(*RunOptions)) *RunOptions {
	o := &RunOptions{
		IO: f.ios, ReadFile: os.ReadFile, Spec: f.spec, Dump: dump, Backend: "fake",
		NewBackend: func(string) (backend.Backend, error) { return fake.New(), nil },
	}
	if mod != nil {
		mod(o)
	}
	return o
}

func index(t *testing.T, dir string) check.DumpIndex {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ix check.DumpIndex
	if err := json.Unmarshal(data, &ix); err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestRun(t *testing.T) {
	f := setup(t, testSpec, testKernel)
	dump := filepath.Join(f.dir, "dump")
	if err := runRun(context.Background(), f.opts(dump, nil)); err != nil {
		t.Fatalf("%v\n%s", err, f.errs)
	}
	ix := index(t, dump)
	if !ix.Complete || len(ix.Cases) != 2 || ix.Cases[0].Case != "quick/N=4" || ix.Cases[1].Case != "quick/N=8" {
		t.Fatalf("index = %+v", ix)
	}
	out := ix.Cases[1].Buffers[1]
	if out.Name != "out" || out.Role != "output" || out.Dtype != "<f4" || len(out.Shape) != 2 || out.Shape[1] != 4 || strings.Join(out.Changed, ",") != "after" {
		t.Errorf("out = %+v", out)
	}
	for _, rel := range out.Files {
		if _, err := os.Stat(filepath.Join(dump, rel)); err != nil {
			t.Error(err)
		}
	}
	for _, want := range []string{"case 1/2 quick/N=4: running...", "case 2/2 quick/N=8: done in"} {
		if !strings.Contains(f.errs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, f.errs)
		}
	}
	for _, want := range []string{"spec " + f.spec + ": 2 of 2 cases, baseline", "quick/N=8  ok      out", "index: " + filepath.Join(dump, "index.json")} {
		if !strings.Contains(f.out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, f.out)
		}
	}

	// A second run replaces the dump; --case picks cases from every set.
	if err := runRun(context.Background(), f.opts(dump, func(o *RunOptions) { o.Cases = []string{"big/N=64"}; o.JSON = true })); err != nil {
		t.Fatal(err)
	}
	if ix := index(t, dump); len(ix.Cases) != 1 || ix.Cases[0].Case != "big/N=64" {
		t.Errorf("second dump = %+v", ix)
	}
	if _, err := os.Stat(filepath.Join(dump, "cases", "002-quick-N=8")); err == nil {
		t.Error("the previous dump's case directory survived")
	}
}

func TestRunFailures(t *testing.T) {
	t.Run("a crashing variant dumps its inputs", func(t *testing.T) {
		f := setup(t, testSpec, testKernel)
		v := filepath.Join(f.dir, "v.metal")
		os.WriteFile(v, []byte(strings.Replace(testKernel, "// fake: copy 0 1", "// fake: crash", 1)), 0o644)
		dump := filepath.Join(f.dir, "dump")
		err := runRun(context.Background(), f.opts(dump, func(o *RunOptions) { o.Variant = v }))
		if !errors.Is(err, cmdutil.ErrSilent) {
			t.Fatalf("error = %v, want a reported failure", err)
		}
		ix := index(t, dump)
		if ix.Variant != v || len(ix.Cases) != 2 || !strings.Contains(ix.Cases[0].Error, "crash") || ix.Cases[0].Buffers[0].Files["before"] == "" || ix.Cases[0].Buffers[0].Files["after"] != "" {
			t.Errorf("index = %+v", ix)
		}
		if !strings.Contains(f.out.String(), "variant "+v+" in place of") || !strings.Contains(f.out.String(), "quick/N=4  failed") {
			t.Errorf("stdout:\n%s", f.out)
		}
	})
	t.Run("a spec that does not fit its kernel runs nothing", func(t *testing.T) {
		f := setup(t, strings.Replace(testSpec, "type: float, count: N, role: input", "type: half, count: N, role: input", 1), testKernel)
		dump := filepath.Join(f.dir, "dump")
		err := runRun(context.Background(), f.opts(dump, nil))
		if err == nil || !strings.Contains(err.Error(), `k.yaml:3:23: case quick/N=4: stage "k": buffer "in" (half) bound to kernel parameter "in" [[buffer(0)]]`) {
			t.Fatalf("error = %v", err)
		}
		if strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("one mistake reported per case:\n%v", err)
		}
		if _, err := os.Stat(dump); err == nil {
			t.Error("dump directory made for a refused spec")
		}
	})
	t.Run("unknown case", func(t *testing.T) {
		f := setup(t, testSpec, testKernel)
		err := runRun(context.Background(), f.opts(filepath.Join(f.dir, "d"), func(o *RunOptions) { o.Cases = []string{"N=5"}; o.Sets = []string{"quick"} }))
		var fe *cmdutil.FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), `--case "N=5": no such case in sets quick (cases: quick/N=4, quick/N=8)`) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("a directory of other files", func(t *testing.T) {
		f := setup(t, testSpec, testKernel)
		err := runRun(context.Background(), f.opts(f.dir, nil))
		if err == nil || !strings.Contains(err.Error(), "is not empty and holds no metalab dump") {
			t.Errorf("error = %v", err)
		}
	})
}

// cancelling is a backend whose programs cancel the run's context on
// their second run, as Ctrl-C would.
type cancelling struct {
	backend.Backend
	cancel context.CancelFunc
	runs   *int
}

func (c cancelling) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	p, err := c.Backend.Compile(ctx, src)
	return cancelProgram{p, c}, err
}

type cancelProgram struct {
	backend.Program
	c cancelling
}

func (p cancelProgram) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	*p.c.runs++
	if *p.c.runs == 2 {
		p.c.cancel()
		return nil, ctx.Err()
	}
	return p.Program.Run(ctx, d)
}

func TestRunInterrupted(t *testing.T) {
	f := setup(t, testSpec, testKernel)
	dump := filepath.Join(f.dir, "dump")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	o := f.opts(dump, nil)
	o.NewBackend = func(string) (backend.Backend, error) { return cancelling{fake.New(), cancel, &runs}, nil }
	err := runRun(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "interrupted: 1 of 2 cases ran and are dumped in "+dump) {
		t.Fatalf("error = %v", err)
	}
	ix := index(t, dump)
	if ix.Complete || len(ix.Cases) != 1 || ix.Cases[0].Case != "quick/N=4" {
		t.Errorf("index = %+v", ix)
	}
	if !strings.Contains(f.errs.String(), "case 2/2 quick/N=8: interrupted") {
		t.Errorf("stderr:\n%s", f.errs)
	}
}

// TestRunCPU runs a real kernel on the cpu backend and checks the dumped
// output against the dumped input: each threadgroup's sum of squares.
func TestRunCPU(t *testing.T) {
	be := cputest.Shared(t)
	kernel, err := os.ReadFile("../../../kernels/example.metal")
	if err != nil {
		t.Skip("no bundled example kernel:", err)
	}
	f := setup(t, `source: k.metal
buffers:
  - {name: in, index: 0, type: float, count: G * 256, shape: [G, 256], role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: out, index: 1, type: float, count: G, role: output}
stages:
  - {entry: reduce, threadgroups: [G], threads: [64]}
sets:
  s:
    cases: [{G: 3}]
`, string(kernel))
	dump := filepath.Join(f.dir, "dump")
	o := f.opts(dump, nil)
	o.NewBackend = func(string) (backend.Backend, error) { return be, nil }
	if err := runRun(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, f.errs)
	}
	ix := index(t, dump)
	read := func(rel string) []float32 {
		fh, err := os.Open(filepath.Join(dump, rel))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		h, data, err := npy.Read(fh)
		if err != nil || h.Descr != "<f4" {
			t.Fatalf("%s: %+v %v", rel, h, err)
		}
		out := make([]float32, len(data)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return out
	}
	in := read(ix.Cases[0].Buffers[0].Files["before"])
	out := read(ix.Cases[0].Buffers[1].Files["after"])
	if len(in) != 3*256 || len(out) != 3 {
		t.Fatalf("%d inputs, %d outputs", len(in), len(out))
	}
	for g := range 3 {
		var want float64
		for _, x := range in[g*256 : (g+1)*256] {
			want += float64(x) * float64(x)
		}
		if math.Abs(float64(out[g])-want) > 1e-4*want {
			t.Errorf("out[%d] = %v, want about %v", g, out[g], want)
		}
	}
}
