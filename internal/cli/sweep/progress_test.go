package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/backend/fake"
	"metalab/internal/cli/cmdutil"
)

// TestProgressBars draws bars when told the output is a terminal: one per
// counted stage, with its count of the variants it expects.
func TestProgressBars(t *testing.T) {
	spec := setup(t)
	out := filepath.Join(t.TempDir(), "sweep")
	ios, _, _, stderr := cmdutil.Test()
	f := &cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}
	cmd := NewCmdSweep(f, func(o *SweepOptions) error {
		o.NewBackend = func(context.Context, string) (backend.Backend, error) { return fake.New(), nil }
		on := true
		o.Terminal = &on
		return sweepRun(context.Background(), o)
	})
	cmd.SetArgs(strings.Fields(spec + " --fn k --backend fake --cases quick --target C=1 --ops unroll-pragma,drop-barrier --out " + out))
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
