package mutatetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/mutate/unrollpragma"
)

// recorder is a tb that records failures instead of failing the test.
type recorder struct {
	failed bool
	msgs   []string
}

// fatal unwinds a case stopped by Fatal, as runtime.Goexit does for a real test.
type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	panic(fatal{})
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(fatal{})
}
func (r *recorder) Logf(string, ...any) {}

// run runs one golden archive against the recorder.
func (r *recorder) run(t *testing.T, archive string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "case.txtar")
	if err := os.WriteFile(file, []byte(archive), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(fatal); !ok {
				panic(v)
			}
		}
	}()
	runCase(r, file, unrollpragma.Mutation)
}

// inputWith is an input.metal section whose loop line ends in loopNote and
// whose body line ends in bodyNote.
func inputWith(loopNote, bodyNote string) string {
	return `-- input.metal --
kernel void k(device float *out [[buffer(0)]])
{
    for (int i = 0; i < 2; ++i) {` + loopNote + `
        out[i] = 0.0f;` + bodyNote + `
    }
}
`
}

var input = inputWith(` // want "trip count 2"`, "")

// fullWith is a want/full.metal section with the given pragma.
func fullWith(pragma string) string {
	return `-- want/full.metal --
kernel void k(device float *out [[buffer(0)]])
{
    #pragma clang loop ` + pragma + `
    for (int i = 0; i < 2; ++i) { // want "trip count 2"
        out[i] = 0.0f;
    }
}
`
}

var goodFull = fullWith("unroll(full)")

// TestBadGoldens checks that the harness fails on goldens that do not
// match what the mutation does, and passes the one that does.
func TestBadGoldens(t *testing.T) {
	tests := []struct {
		name    string
		archive string
		want    string // substring of a failure message; "" means the case passes
	}{
		{"good", "ok\n" + input + goodFull, ""},
		{"wrong_variant", "bad\n" + input + fullWith("unroll(disable)"), "want/full.metal mismatch"},
		{"unknown_choice", "bad\n" + input + "-- want/count9.metal --\nx\n", `no choice "count9"`},
		{"no_such_site", "bad\n" + input + "-- want/3=full.metal --\nx\n", "no site 3"},
		{"wrong_diff", "bad\n" + input + "-- want.diff --\nnot a diff\n", "want.diff mismatch"},
		{"missing_want_comment", "bad\n" + inputWith("", ""), "unexpected site"},
		{"unmet_want_comment", "bad\n" + inputWith(` // want "trip count 2"`, ` // want "nothing"`), `no site matching "nothing"`},
		{"wrong_message", "bad\n" + inputWith(` // want "trip count 3"`, ""), "unexpected site"},
		{"unmet_skip", "bad\n" + inputWith(` // want "trip count 2"`, ` // skip "x"`), `no skip matching "x"`},
		{"no_input", "bad\n" + goodFull, "no input.metal"},
		{"bad_flag", "-bogus=1\n" + input, "unknown flag line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			r.run(t, tt.archive)
			msgs := strings.Join(r.msgs, "\n")
			if tt.want == "" {
				if r.failed {
					t.Fatalf("good golden failed:\n%s", msgs)
				}
				return
			}
			if !r.failed {
				t.Fatalf("bad golden passed, want a failure containing %q", tt.want)
			}
			if !strings.Contains(msgs, tt.want) {
				t.Errorf("failures do not mention %q:\n%s", tt.want, msgs)
			}
		})
	}
}
