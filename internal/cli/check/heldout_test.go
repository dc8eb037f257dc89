package check

import (
	"strings"
	"testing"

	"metalab/internal/cli/cmdutil/cmdtest"
)

// TestHeldOutFlags checks the held-out flags: the default (-1: the
// spec's domains decide), a count, 0, a seed, fresh seeds and replays;
// a negative count is a usage error.
func TestHeldOutFlags(t *testing.T) {
	got := cmdtest.ParseArgs(t, NewCmdCheck, []string{"k.yaml"}, "")
	if got.HeldOut != -1 || got.SeedSet || got.FreshSeeds || got.Replay != nil {
		t.Errorf("defaults: %+v", *got)
	}
	got = cmdtest.ParseArgs(t, NewCmdCheck, strings.Fields("k.yaml --held-out 0 --seed 7 --fresh-seeds --replay a/b@1/N=2 --replay r.txt"), "")
	if got.HeldOut != 0 || !got.SeedSet || got.Seed != 7 || !got.FreshSeeds || strings.Join(got.Replay, " ") != "a/b@1/N=2 r.txt" {
		t.Errorf("flags: %+v", *got)
	}
	cmdtest.ParseArgs(t, NewCmdCheck, strings.Fields("k.yaml --held-out -3"), "--held-out -3")
}

// TestReplayTokens checks that a replay file gives its tokens, one a line
// with comments skipped, and a check --json report its shrunk cases.
func TestReplayTokens(t *testing.T) {
	if got := replayTokens([]byte("# replay\nquick/a@1/N=2\n\n  quick/b@2/N=3  \n")); strings.Join(got, " ") != "quick/a@1/N=2 quick/b@2/N=3" {
		t.Errorf("lines: %q", got)
	}
	rep := `{"spec": "k.yaml", "variants": [{"name": "v", "held_out": {"judged": 1, "skipped": 0, "shrunk": {"case": "quick/h", "token": "quick/h@5/N=1"}}}, {"name": "w"}]}`
	if got := replayTokens([]byte(rep)); strings.Join(got, " ") != "quick/h@5/N=1" {
		t.Errorf("report: %q", got)
	}
}
