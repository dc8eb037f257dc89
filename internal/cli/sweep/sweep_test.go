package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/backend/fake"
	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
	"metalab/search"
)

func TestNewCmdSweep(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		check   func(t *testing.T, o *SweepOptions)
		wantErr string
	}{
		{name: "defaults", args: "k.yaml --fn k", check: func(t *testing.T, o *SweepOptions) {
			if o.Spec != "k.yaml" || o.Strategy != "ablate" || o.Backend != "cpu" || o.Choices != "all" || o.Seed != 1 ||
				o.Rule.MinGain != 0.03 || o.Rule.Confirmations != 2 || o.Phases.Explore.Pairs != 3 || o.Phases.Confirm.Pairs != 9 ||
				o.Phases.Confirm.Top != 3 || o.TGLimit != 16384 || o.MinStep != 0 || o.Beam != 0 {
				t.Errorf("defaults: %+v", *o)
			}
		}},
		{name: "main job", args: "k.yaml --fn k --cases quick --strategy ablate --ops unroll-pragma,unroll --budget variants=12 --out /tmp/s", check: func(t *testing.T, o *SweepOptions) {
			if strings.Join(o.Ops, ",") != "unroll-pragma,unroll" || o.Budget.Variants != 12 || o.Out != "/tmp/s" || strings.Join(o.Cases, ",") != "quick" {
				t.Errorf("options: %+v", *o)
			}
		}},
		{name: "rule flags", args: "k.yaml --fn k --min-gain 5% --max-regression 0.02 --confirmations 1 --confirm-pairs 11", check: func(t *testing.T, o *SweepOptions) {
			if o.Rule.MinGain != 0.05 || o.Rule.MaxRegression != 0.02 || o.Rule.Confirmations != 1 || o.Phases.Confirm.Pairs != 11 {
				t.Errorf("rule: %+v, confirm %+v", o.Rule, o.Phases.Confirm)
			}
		}},
		{name: "beam", args: "k.yaml --fn k --strategy beam --beam 4 --min-step 2%", check: func(t *testing.T, o *SweepOptions) {
			if o.Beam != 4 || o.MinStep != 0.02 {
				t.Errorf("beam %d, step %v", o.Beam, o.MinStep)
			}
		}},
		{name: "shard", args: "k.yaml --fn k --shard 2/3", check: func(t *testing.T, o *SweepOptions) {
			if o.Shard != (search.Shard{Index: 2, Count: 3}) {
				t.Errorf("shard %v", o.Shard)
			}
		}},
		{name: "resume alone", args: "--resume --out d", check: func(t *testing.T, o *SweepOptions) {
			if o.Spec != "" || !o.Resume || o.Out != "d" {
				t.Errorf("resume: %+v", *o)
			}
		}},
		{name: "edits and points", args: "k.yaml --fn k --strategy ablate,grid --point NSG=4 --variant a.metal --variant dir --scope file", check: func(t *testing.T, o *SweepOptions) {
			if o.Strategy != "ablate" || o.Tune != "grid" || o.Point != "NSG=4" || strings.Join(o.Variants, ",") != "a.metal,dir" || o.Scope != "file" {
				t.Errorf("options: %+v", *o)
			}
		}},
		{name: "points alone", args: "k.yaml --fn k --strategy random --samples 3", check: func(t *testing.T, o *SweepOptions) {
			if o.Strategy != "" || o.Tune != "random" || o.Samples != 3 {
				t.Errorf("options: strategy %q, tune %q, samples %d", o.Strategy, o.Tune, o.Samples)
			}
		}},
		{name: "parity and screen", args: "k.yaml --fn k --parity rel=1e-6 --max-noise 10%", check: func(t *testing.T, o *SweepOptions) {
			if o.Parity.String() != "rel=1e-06" || o.Screen == nil || o.Screen.MaxNoise != 0.1 || o.Screen.Off {
				t.Errorf("parity %v, screen %+v", o.Parity, o.Screen)
			}
		}},
		{name: "bitwise by default", args: "k.yaml --fn k", check: func(t *testing.T, o *SweepOptions) {
			if !o.Parity.Bitwise() || o.Screen != nil || o.Scope != "fn" {
				t.Errorf("parity %v, screen %+v, scope %q", o.Parity, o.Screen, o.Scope)
			}
		}},
		{name: "bad parity", args: "k.yaml --fn k --parity ulp", wantErr: "--parity: "},
		{name: "bad scope", args: "k.yaml --fn k --scope all", wantErr: "--scope \"all\": want fn or file"},
		{name: "two edit strategies", args: "k.yaml --fn k --strategy loo,beam", wantErr: "loo and beam both search edits"},
		{name: "two parameter strategies", args: "k.yaml --fn k --strategy grid,random", wantErr: "grid and random both search parameters"},
		{name: "unknown strategy", args: "k.yaml --fn k --strategy anneal", wantErr: "want one of ablate, stack, loo, greedy, beam, grid, random"},
		{name: "screen off and noise", args: "k.yaml --fn k --no-screen --max-noise 5%", wantErr: "--no-screen turns the screen off"},
		{name: "shard greedy", args: "k.yaml --fn k --strategy greedy,grid --shard 1/2", wantErr: "cannot be split"},
		{name: "resume with variant", args: "--resume --out d --variant a.metal", wantErr: "--variant would change them"},
		{name: "no spec", args: "--fn k", wantErr: "want one argument"},
		{name: "no fn", args: "k.yaml", wantErr: "--fn NAME is required"},
		{name: "bad budget", args: "k.yaml --fn k --budget cost=3", wantErr: "--budget"},
		{name: "bad shard", args: "k.yaml --fn k --shard 3/2", wantErr: "--shard"},
		{name: "adaptive shard", args: "k.yaml --fn k --strategy greedy --shard 1/2", wantErr: "cannot be split"},
		{name: "bad strategy", args: "k.yaml --fn k --strategy anneal", wantErr: `--strategy "anneal"`},
		{name: "few confirm pairs", args: "k.yaml --fn k --confirm-pairs 5", wantErr: "fewer than the rule's min_pairs"},
		{name: "bad gain", args: "k.yaml --fn k --min-gain 300%", wantErr: "--min-gain"},
		{name: "resume without out", args: "--resume", wantErr: "needs --out"},
		{name: "resume alone with settings", args: "--resume --out d --seed 4", wantErr: "--seed would change them"},
		{name: "bad choices", args: "k.yaml --fn k --choices some", wantErr: "--choices"},
		{name: "jobs default", args: "k.yaml --fn k", check: func(t *testing.T, o *SweepOptions) {
			if o.Jobs != runtime.NumCPU() || o.Pause != "auto" {
				t.Errorf("jobs %d, pause %q: want every core and auto", o.Jobs, o.Pause)
			}
		}},
		{name: "jobs", args: "k.yaml --fn k --jobs 3 --pause-during-samples off", check: func(t *testing.T, o *SweepOptions) {
			if o.Jobs != 3 || o.Pause != "off" {
				t.Errorf("jobs %d, pause %q", o.Jobs, o.Pause)
			}
		}},
		{name: "resume alone with jobs", args: "--resume --out d --jobs 4 --pause-during-samples on", check: func(t *testing.T, o *SweepOptions) {
			if o.Jobs != 4 || o.Pause != "on" {
				t.Errorf("jobs %d, pause %q", o.Jobs, o.Pause)
			}
		}},
		{name: "bad jobs", args: "k.yaml --fn k --jobs -2", wantErr: "--jobs -2: want at least 1"},
		{name: "bad pause", args: "k.yaml --fn k --pause-during-samples sometimes", wantErr: `--pause-during-samples "sometimes": want on, off or auto`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cmdtest.ParseArgs(t, NewCmdSweep, strings.Fields(tt.args), tt.wantErr)
			if got != nil && tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

// setup copies the search package's test kernel and spec into a
// temporary directory and returns the spec's path.
func setup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"k.metal", "k.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "search", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "k.yaml")
}

// run runs `metalab sweep` in-process on the fake backend.
func run(t *testing.T, ctx context.Context, args string) (stdout, stderr string, err error) {
	t.Helper()
	ios, _, out, errOut := cmdutil.Test()
	f := &cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile, Version: "test"}
	cmd := NewCmdSweep(f, func(o *SweepOptions) error {
		o.NewBackend = func(context.Context, string) (backend.Backend, error) { return fake.New(), nil }
		off := false
		o.Terminal = &off
		return sweepRun(ctx, o)
	})
	cmd.SetArgs(strings.Fields(args))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestSweepRun(t *testing.T) {
	spec := setup(t)
	out := filepath.Join(t.TempDir(), "sweep")
	stdout, stderr, err := run(t, context.Background(), spec+" --fn k --backend fake --cases quick --target C=1 --ops unroll-pragma,drop-barrier --out "+out)
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr)
	}
	for _, want := range []string{"verdicts: 1 retained, 0 rejected", "retained drop-barrier.k.0=drop-", filepath.Join(out, "patches"), "report: " + filepath.Join(out, "report.md")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{"] control: checking the baseline", "] explore", "] confirm", "] report: writing the report"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	// Resumed with its directory alone, it has nothing left to do and
	// says the same.
	again, stderr, err := run(t, context.Background(), "--resume --out "+out)
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr)
	}
	if !strings.Contains(again, "verdicts: 1 retained") {
		t.Errorf("resumed:\n%s", again)
	}
	// Without --resume the directory is refused (usage, exit 2).
	_, _, err = run(t, context.Background(), spec+" --fn k --backend fake --cases quick --target C=1 --ops unroll-pragma,drop-barrier --out "+out)
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("a second sweep into the directory: %v", err)
	}
}

func TestSweepJSON(t *testing.T) {
	spec := setup(t)
	out := filepath.Join(t.TempDir(), "sweep")
	stdout, _, err := run(t, context.Background(), spec+" --fn k --backend fake --cases quick --ops unroll-pragma --json --out "+out)
	// Nothing is faster than the baseline: no variant is retained, a
	// negative result (exit 1) reported as JSON.
	var re *cmdutil.ReportedError
	if !errors.As(err, &re) {
		t.Fatalf("error = %v, want a reported negative result", err)
	}
	var res struct {
		Variants int    `json:"variants"`
		Control  string `json:"control"`
		Report   string `json:"report"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Variants != 3 || res.Control != "pass" {
		t.Errorf("json %+v (%v):\n%s", res, err, stdout)
	}
	// A usage error is JSON too.
	stdout, _, err = run(t, context.Background(), spec+" --fn k --backend fake --target C=9 --json --out "+filepath.Join(t.TempDir(), "x"))
	var e cmdutil.ErrorJSON
	if jerr := json.Unmarshal([]byte(stdout), &e); jerr != nil || e.Kind != "usage" || !strings.Contains(e.Error, "C=9") || !errors.As(err, &re) {
		t.Errorf("usage error as JSON: %+v (%v), err %v:\n%s", e, jerr, err, stdout)
	}
}

// TestSweepInterrupted cancels a sweep's context while it runs: it stops,
// writes the report of what finished and says how to continue.
func TestSweepInterrupted(t *testing.T) {
	spec := setup(t)
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(spec), "k.metal"))
	os.WriteFile(filepath.Join(filepath.Dir(spec), "k.metal"), []byte(strings.Replace(string(b), "// fake: copy 0 1", "// fake: copy 0 1\n    // fake: sleep 20ms", 1)), 0o644)
	out := filepath.Join(t.TempDir(), "sweep")
	ctx, cancel := context.WithCancel(context.Background())
	ios, _, stdout, stderr := cmdutil.Test()
	f := &cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}
	cmd := NewCmdSweep(f, func(o *SweepOptions) error {
		o.NewBackend = func(context.Context, string) (backend.Backend, error) { return fake.New(), nil }
		return sweepRun(ctx, o)
	})
	cmd.SetArgs(strings.Fields(spec + " --fn k --backend fake --cases quick --ops unroll-pragma,drop-barrier --out " + out))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	done := make(chan error)
	go func() { done <- cmd.Execute() }()
	for {
		if _, err := os.Stat(filepath.Join(out, "variants")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want the cancellation", err)
	}
	if !strings.Contains(stderr.String(), "continue with: metalab sweep --resume --out "+out) || !strings.Contains(stdout.String(), "report: ") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Error("no report of what finished")
	}
}
