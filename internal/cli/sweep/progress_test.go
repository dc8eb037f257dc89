package sweep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"metalab/backend"
	"metalab/backend/fake"
	"metalab/internal/cli/cmdutil"
	"metalab/search"
)

// fakeSweep returns a sweep of the test spec on the fake backend, its
// output a terminal or not, with flags added, and its standard error.
func fakeSweep(t *testing.T, terminal bool, flags string) (*cobra.Command, *bytes.Buffer) {
	spec := setup(t)
	out := filepath.Join(t.TempDir(), "sweep")
	ios, _, _, stderr := cmdutil.Test()
	f := &cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}
	cmd := NewCmdSweep(f, func(o *SweepOptions) error {
		o.NewBackend = func(context.Context, string) (backend.Backend, error) { return fake.New(), nil }
		o.Terminal = &terminal
		return sweepRun(context.Background(), o)
	})
	cmd.SetArgs(strings.Fields(spec + " --fn k --backend fake --cases quick --target C=1 --ops unroll-pragma,drop-barrier " + flags + " --out " + out))
	return cmd, stderr
}

// TestProgressBars draws bars when told the output is a terminal: one per
// counted stage, with its count of the variants it expects.
func TestProgressBars(t *testing.T) {
	cmd, stderr := fakeSweep(t, true, "")
	done := make(chan error)
	go func() { done <- cmd.Execute() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("the sweep with bars did not end; it drew %q", stderr)
	}
	for _, want := range []string{"[    0s] control: checking the baseline", "explore  4/4", "confirm  1/1 done"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("bars lack %q: %q", want, stderr)
		}
	}
	if strings.Contains(stderr.String(), "] explore") {
		t.Errorf("plain lines for a counted stage on a terminal: %q", stderr)
	}
}

// TestProgressPipeline shows the pool's state on every explore line and
// takes the ETA from the pool's rate when it is the slower: 10 variants
// left at 0.5 checks per second is 20s, though the main loop finished 2
// in no time.
func TestProgressPipeline(t *testing.T) {
	var b strings.Builder
	off := false
	p := newProgress(&b, &off)
	pool := &search.Pipeline{Jobs: 4, Queued: 3, Compiling: 2, Verifying: 1, Timing: 1, Checked: 2, Rate: 0.5}
	p.event(search.Event{Stage: "explore", Done: 2, Total: 12, Variant: "v2", Msg: "explored", Pipeline: pool})
	line := b.String()
	for _, want := range []string{"explore 2/12", "(ETA 20s)", "[pool 4: 3 queued, 2 compiling, 1 verifying, 0 confirming, 1 timing, 0.50 checks/s]"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	b.Reset()
	p.event(search.Event{Stage: "pipeline", Pipeline: pool})
	if b.Len() != 0 {
		t.Errorf("a pipeline event printed a plain line: %q", b.String())
	}
}

// TestProgressJobs runs a sweep with a pool of two: its explore lines
// show the pool.
func TestProgressJobs(t *testing.T) {
	cmd, stderr := fakeSweep(t, false, "--jobs 2")
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "[pool 2: ") {
		t.Errorf("no pool on the explore lines: %q", stderr)
	}
}
