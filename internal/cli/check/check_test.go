package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
	"metalab/backend/fake"
	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
)

func TestNewCmdCheck(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    CheckOptions
		wantErr string
	}{
		{name: "defaults", args: "k.yaml", want: CheckOptions{Spec: "k.yaml", Backend: "cpu", TGLimit: 16384}},
		{name: "everything", args: "k.yaml --variant a.metal --variant b.metal --backend fake --cases quick --cases edge --tg-limit 8K --race --json",
			want: CheckOptions{Spec: "k.yaml", Variants: []string{"a.metal", "b.metal"}, Backend: "fake", Cases: []string{"quick", "edge"}, TGLimit: 8192, Race: true, JSON: true}},
		{name: "comma cases", args: "k.yaml --cases quick,edge --cases full", want: CheckOptions{Spec: "k.yaml", Backend: "cpu", TGLimit: 16384, Cases: []string{"quick", "edge", "full"}}},
		{name: "kib", args: "k.yaml --tg-limit 16KiB", want: CheckOptions{Spec: "k.yaml", Backend: "cpu", TGLimit: 16384}},
		{name: "bytes", args: "k.yaml --tg-limit 12000", want: CheckOptions{Spec: "k.yaml", Backend: "cpu", TGLimit: 12000}},
		{name: "bad limit", args: "k.yaml --tg-limit lots", wantErr: `--tg-limit: bad size "lots"`},
		{name: "zero limit", args: "k.yaml --tg-limit 0", wantErr: `bad size "0"`},
		{name: "no spec", args: "", wantErr: "want 1 argument"},
		{name: "two specs", args: "a.yaml b.yaml", wantErr: "want 1 argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cmdtest.ParseArgs(t, NewCmdCheck, strings.Fields(tt.args), tt.wantErr)
			if got == nil {
				return
			}
			if got.Spec != tt.want.Spec || got.Backend != tt.want.Backend || got.TGLimit != tt.want.TGLimit ||
				got.Race != tt.want.Race || got.JSON != tt.want.JSON ||
				strings.Join(got.Variants, ",") != strings.Join(tt.want.Variants, ",") ||
				strings.Join(got.Cases, ",") != strings.Join(tt.want.Cases, ",") {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

const testSpec = `source: k.metal
buffers:
  - {name: in, index: 0, type: half, count: N, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: out, index: 1, type: half, count: N, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [N]}
sets:
  quick:
    cases: [{N: 8}]
  full:
    cases: [{N: 8}, {N: 64}]
`

func TestCheckRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		return p
	}
	specPath := write("k.yaml", testSpec)
	write("k.metal", "// fake: copy 0 1\n")
	good := write("good.metal", "// fake: copy 0 1\n// unrolled\n")
	bad := write("bad.metal", "// fake: copy 0 1\n// fake: poke 1 10 1\n")
	oob := write("oob.metal", "// fake: copy 0 1\n// fake: poke 1 70 1\n")
	fakeBackend := func(name string) (backend.Backend, error) {
		if name != "fake" {
			return nil, cmdutil.FlagErrorf("unknown --backend %q", name)
		}
		return fake.New(), nil
	}
	tests := []struct {
		name     string
		variants []string
		cases    []string
		json     bool
		wantErr  error // nil, cmdutil.ErrSilent
		flagErr  bool
		wantOut  []string
	}{
		{name: "pass", variants: []string{good}, wantOut: []string{"good ", "pass", "1/1", "sets quick (the spec's default; not run: full; choose with --cases)"}},
		{name: "every set", variants: []string{good}, cases: []string{"quick", "full"}, wantOut: []string{"good ", "pass", "3/3", "3 cases of sets quick, full on fake"}},
		{name: "quick set", variants: []string{good}, cases: []string{"quick"}, wantOut: []string{"good ", "pass", "1/1"}},
		{name: "parity", variants: []string{good, bad}, cases: []string{"full"}, wantErr: cmdutil.ErrSilent,
			wantOut: []string{"fail-parity", "case full/N=8: buffer out[5] (element 5, half)", "case full/N=64: buffer out[5]", "1 of 64 elements differ"}},
		{name: "bad access is a result", variants: []string{oob, good}, wantErr: cmdutil.ErrSilent,
			wantOut: []string{"bad-access", "oob.metal:2", "good ", "pass"}},
		{name: "json", variants: []string{bad}, json: true, wantErr: cmdutil.ErrSilent, wantOut: []string{`"status": "fail-parity"`}},
		{name: "unknown set", cases: []string{"nope"}, flagErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, out, _ := cmdutil.Test()
			err := checkRun(context.Background(), &CheckOptions{
				IO: ios, ReadFile: os.ReadFile, NewBackend: fakeBackend,
				Spec: specPath, Variants: tt.variants, Backend: "fake", Cases: tt.cases, TGLimit: 16384, JSON: tt.json,
			})
			var fe *cmdutil.FlagError
			switch {
			case tt.flagErr:
				if !errors.As(err, &fe) {
					t.Fatalf("error = %v, want a usage error", err)
				}
				return
			case !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil):
				t.Fatalf("error = %v, want %v\n%s", err, tt.wantErr, out)
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			if tt.json {
				var v map[string]any
				if err := json.Unmarshal(out.Bytes(), &v); err != nil {
					t.Errorf("--json output is not JSON: %v", err)
				}
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		give string
		want int
	}{{"16384", 16384}, {"16KiB", 16384}, {"16kib", 16384}, {"8K", 8192}, {"8k", 8192}, {"1MiB", 1 << 20}, {"32 KiB", 32768}, {"100b", 100}}
	for _, tt := range tests {
		if got, err := ParseSize(tt.give); err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.give, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "K", "-1", "1.5K", "16 GiB", "9223372036854775807K", "4096M"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
}

func TestSourceFlag(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		return p
	}
	specPath := write("k.yaml", testSpec)
	base := write("k.metal", "// fake: copy 0 1\n")
	snapshot := write("snapshot.metal", "// fake: copy 0 1\n")
	stale := write("stale.metal", "// fake: copy 0 1\n// an older line\n")
	good := write("good.metal", "// fake: copy 0 1\n// unrolled\n")
	tests := []struct {
		name    string
		source  string
		flagErr bool
		wantErr string // "" means success
	}{
		{name: "the source", source: base},
		{name: "a snapshot with the same bytes", source: snapshot},
		{name: "a stale snapshot", source: stale, flagErr: true, wantErr: "--source " + stale + " (sha256 "},
		{name: "missing", source: filepath.Join(dir, "nope.metal"), wantErr: "--source: open "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, out, _ := cmdutil.Test()
			err := checkRun(context.Background(), &CheckOptions{
				IO: ios, ReadFile: os.ReadFile, NewBackend: func(string) (backend.Backend, error) { return fake.New(), nil },
				Spec: specPath, Variants: []string{good}, Source: tt.source, Backend: "fake", TGLimit: 16384,
			})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("error = %v\n%s", err, out)
				}
				if !strings.Contains(out.String(), "good ") {
					t.Errorf("output lacks the variant:\n%s", out)
				}
				return
			}
			var fe *cmdutil.FlagError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.As(err, &fe) != tt.flagErr {
				t.Fatalf("error = %v, want one containing %q (usage error: %v)", err, tt.wantErr, tt.flagErr)
			}
			if tt.flagErr && !strings.Contains(err.Error(), "is stale") {
				t.Errorf("error = %v, want it to say a changed snapshot is stale", err)
			}
		})
	}
}

// TestControlTimeoutHint: when the baseline itself times out, no variant
// is judged and the user is told how to give large cases more time.
func TestControlTimeoutHint(t *testing.T) {
	dir := t.TempDir()
	specPath := filepath.Join(dir, "k.yaml")
	if err := os.WriteFile(specPath, []byte(testSpec), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "k.metal"), []byte("// fake: timeout\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	ios, _, out, errOut := cmdutil.Test()
	err := checkRun(context.Background(), &CheckOptions{
		IO: ios, ReadFile: os.ReadFile, NewBackend: func(string) (backend.Backend, error) { return fake.New(), nil },
		Spec: specPath, Backend: "fake", TGLimit: 16384,
	})
	if !errors.Is(err, cmdutil.ErrSilent) {
		t.Fatalf("error = %v, want a failed check", err)
	}
	if !strings.Contains(out.String(), "control  timeout") || !strings.Contains(errOut.String(), "longer --timeout") {
		t.Errorf("stdout:\n%s\nstderr:\n%s\nwant a control timeout and a --timeout hint", out, errOut)
	}
}

func TestSameVariantNames(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"k.yaml": testSpec, "k.metal": "// fake: copy 0 1\n",
		"a/v.metal": "// fake: copy 0 1\n// a\n", "b/v.metal": "// fake: copy 0 1\n// fake: poke 1 0 1\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(dir, "a/v.metal"), filepath.Join(dir, "b/v.metal")
	ios, _, out, _ := cmdutil.Test()
	err := checkRun(context.Background(), &CheckOptions{
		IO: ios, ReadFile: os.ReadFile, NewBackend: func(string) (backend.Backend, error) { return fake.New(), nil },
		Spec: filepath.Join(dir, "k.yaml"), Variants: []string{a, b}, Backend: "fake", TGLimit: 16384,
	})
	if !errors.Is(err, cmdutil.ErrSilent) {
		t.Fatalf("error = %v, want a failed check", err)
	}
	if !strings.Contains(out.String(), a+"  pass") || !strings.Contains(out.String(), b+"  fail-parity") {
		t.Errorf("variants with one file name are not told apart by path:\n%s", out)
	}
}

// plant returns src with the only occurrence of old replaced by new; it
// fails t when old is missing or ambiguous, so that a change to the kernel
// makes the test fail loudly instead of planting nothing.
func plant(t *testing.T, src []byte, old, new string) []byte {
	t.Helper()
	if n := strings.Count(string(src), old); n != 1 {
		t.Fatalf("planted edit: %q occurs %d times in the kernel, want once", old, n)
	}
	return []byte(strings.Replace(string(src), old, new, 1))
}

// TestCheckInOutVariant runs `metalab check` on the bundled qsa_prep spec
// with the cpu backend and a variant whose only fault is one element of
// the KV cache qsa_prep updates in place (vsc, an inout buffer no later
// stage reads): the command must fail and report that element.
func TestCheckInOutVariant(t *testing.T) {
	be := cputest.Shared(t)
	specPath := filepath.Join("..", "..", "..", "kernels", "qsa_prep.yaml")
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "kernels", "qsa_prep.metal"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	same := filepath.Join(dir, "same.metal")
	if err := os.WriteFile(same, append([]byte("// an unchanged copy\n"), src...), 0o666); err != nil {
		t.Fatal(err)
	}
	// Flip the sign of value head 0's first scale at the batch's first cell.
	sign := filepath.Join(dir, "vsc-sign.metal")
	text := plant(t, src, "vsc[r * 4 + (d >> 5)] = sh;", "vsc[r * 4 + (d >> 5)] = (t == 0 && kh == 0 && d == 0) ? -sh : sh;")
	if err := os.WriteFile(sign, text, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", asJSON), func(t *testing.T) {
			ios, _, out, _ := cmdutil.Test()
			err := checkRun(context.Background(), &CheckOptions{
				IO: ios, ReadFile: os.ReadFile, NewBackend: func(string) (backend.Backend, error) { return be, nil },
				Spec: specPath, Variants: []string{same, sign}, Backend: "cpu", Cases: []string{"quick"}, TGLimit: 16384, JSON: asJSON,
			})
			if !errors.Is(err, cmdutil.ErrSilent) {
				t.Fatalf("error = %v, want a failed check\n%s", err, out)
			}
			if !asJSON {
				for _, re := range []string{
					`(?m)^control +pass `, `(?m)^same +pass `, `(?m)^vsc-sign +fail-parity `,
					`case quick/T=8,pos0=0: buffer vsc\[0 0 0\] \(element 0, half\): want [0-9.]+ \(0x[0-9a-f]{4}\), got -[0-9.]+ \(0x[0-9a-f]{4}\); 1 of 88 elements differ\n`,
					`case quick/T=16,pos0=37: buffer vsc\[37 0 0\] \(element 296, half\)`,
				} {
					if !regexp.MustCompile(re).MatchString(out.String()) {
						t.Errorf("output lacks %s:\n%s", re, out)
					}
				}
				return
			}
			var rep struct {
				Control  struct{ Status string }
				Variants []struct {
					Name, Status string
					Cases        []struct {
						Status   string
						Mismatch *struct {
							Buffer    string
							Coords    []int
							Differing int
							Others    []string `json:"other_buffers"`
						}
					}
				}
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("--json output is not JSON: %v\n%s", err, out)
			}
			if rep.Control.Status != "pass" || len(rep.Variants) != 2 || rep.Variants[0].Status != "pass" || rep.Variants[1].Status != "fail-parity" {
				t.Fatalf("control %s, variants %+v; want pass, then same pass and vsc-sign fail-parity", rep.Control.Status, rep.Variants)
			}
			cases := rep.Variants[1].Cases
			if len(cases) != 5 {
				t.Fatalf("vsc-sign: %d cases, want the 5 of the quick set", len(cases))
			}
			for i, c := range cases {
				if m := c.Mismatch; c.Status != "fail-parity" || m == nil || m.Buffer != "vsc" || len(m.Coords) != 3 || m.Coords[1] != 0 || m.Coords[2] != 0 || m.Differing != 1 || len(m.Others) != 0 {
					t.Errorf("vsc-sign case %d: %+v, want one differing element of vsc alone", i, c)
				}
			}
		})
	}
}

// TestCheckInOutFake is TestCheckInOutVariant on the fake backend: a
// variant that changes one byte of an inout buffer fails the command.
func TestCheckInOutFake(t *testing.T) {
	const inout = `source: k.metal
buffers:
  - {name: in, index: 0, type: half, count: 8, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: cache, index: 1, type: char, count: 8, role: inout, gen: {kind: randint, min: -127, max: 127}}
  - {name: out, index: 2, type: half, count: 8, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [8]}
sets:
  quick:
    cases: [{}]
`
	dir := t.TempDir()
	for name, text := range map[string]string{
		"k.yaml": inout, "k.metal": "// fake: copy 0 2\n",
		"same.metal": "// fake: copy 0 2\n// same\n", "cache.metal": "// fake: copy 0 2\n// fake: poke 1 6 0x80\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	ios, _, out, _ := cmdutil.Test()
	err := checkRun(context.Background(), &CheckOptions{
		IO: ios, ReadFile: os.ReadFile, NewBackend: func(string) (backend.Backend, error) { return fake.New(), nil },
		Spec: filepath.Join(dir, "k.yaml"), Variants: []string{filepath.Join(dir, "same.metal"), filepath.Join(dir, "cache.metal")}, Backend: "fake", TGLimit: 16384,
	})
	if !errors.Is(err, cmdutil.ErrSilent) {
		t.Fatalf("error = %v, want a failed check\n%s", err, out)
	}
	for _, re := range []string{`(?m)^control +pass `, `(?m)^same +pass `, `(?m)^cache +fail-parity `, `buffer cache\[6\] \(element 6, char\): .*; 1 of 8 elements differ\n`} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
}
