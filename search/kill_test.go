package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"metalab/search/store"
)

// The child process of TestResumeAfterKill runs a sweep and is killed
// with SIGKILL in the middle.
const (
	childEnv   = "METALAB_SWEEP_CHILD"
	fixtureEnv = "METALAB_SWEEP_FIXTURE"
	jobsEnv    = "METALAB_SWEEP_JOBS" // the child's Options.Jobs
)

func TestMain(m *testing.M) {
	if out := os.Getenv(childEnv); out != "" {
		fx := fixture{dir: os.Getenv(fixtureEnv), spec: filepath.Join(os.Getenv(fixtureEnv), "k.yaml")}
		opts, err := fx.build(out, nil)
		fmt.Sscan(os.Getenv(jobsEnv), &opts.Jobs)
		if err == nil {
			_, err = Run(context.Background(), opts)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// finished lists what a store holds complete: compiles, checks and
// decisions by key, and the measurement keys whose last attempt is
// complete and clean (a sweep takes no more of them).
type finished struct {
	results      map[string]bool // "stage key"
	measurements map[string]int  // key → complete measurements
	clean        map[string]bool // key → its last measurement is clean
	incomplete   int             // samples of measurements cut short
}

func readFinished(t *testing.T, path string) finished {
	t.Helper()
	st, err := store.OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	f := finished{results: map[string]bool{}, measurements: map[string]int{}, clean: map[string]bool{}}
	for _, stage := range []store.Stage{store.StageCompile, store.StageCheck, store.StageConfirm, store.StageDecision, store.StageSummary, store.StageControl} {
		rows, err := st.Results(ctx, store.Query{Stage: stage})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			switch stage {
			case store.StageSummary, store.StageControl:
				k := r.Key.String()
				f.measurements[k]++
				f.clean[k] = !r.Summary.Contaminated
			default:
				f.results[string(stage)+" "+r.Key.String()] = true
			}
		}
	}
	return f
}

// TestResumeAfterKill kills a sweep with SIGKILL in the middle, resumes
// it, and requires that nothing finished before the kill is done again
// and that the report equals an uninterrupted run's but for timings: with
// one job, and with a pool (the killed sweep's and the resumed one's) that
// was checking variants ahead when it was killed.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep in a child process (a few seconds)")
	}
	for _, c := range []struct{ jobs, at int }{{1, 6}, {3, 2}, {3, 6}, {3, 9}} {
		t.Run(fmt.Sprintf("jobs=%d/at=%d", c.jobs, c.at), func(t *testing.T) { resumeAfterKill(t, c.jobs, c.at) })
	}
}

// resumeAfterKill kills the sweep once its store holds at complete
// measurements.
func resumeAfterKill(t *testing.T, jobs, at int) {
	// Every dispatch sleeps 4ms, so the sweep takes long enough to be
	// killed in the middle; the planted timings are as before.
	fx := newFixture(t, "sleep 4ms")
	out := filepath.Join(t.TempDir(), "killed")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+out, fixtureEnv+"="+fx.dir, fmt.Sprintf("%s=%d", jobsEnv, jobs))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A full sweep holds 12 complete measurements; kill it after at.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child sweep did not get half way in 2 minutes")
		}
		if n := countMeasurements(filepath.Join(out, StoreFile)); n >= at {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	before := readFinished(t, filepath.Join(out, StoreFile))
	if len(before.measurements) >= 12 {
		t.Skip("the child finished before it was killed")
	}

	opts := fx.options(t, out, nil)
	opts.Resume = true
	opts.Jobs = jobs
	var taken []string
	opts.onResult = func(stage string, k store.Key) {
		key := k.String()
		switch stage {
		case "checking":
			// A variant is checked again only when the kill cut its
			// checks short: before its compile, every verification case
			// and every timed case's confirmation were recorded (one
			// transaction each).
			n := 0
			for _, c := range opts.Plan.Checked {
				ck := k
				ck.Case = c
				if before.results["check "+ck.String()] {
					n++
				}
			}
			for _, c := range opts.Plan.Cases {
				ck := k
				ck.Case = c
				if before.results["confirm "+ck.String()] {
					n++
				}
			}
			if before.results["compile "+key] && n == len(opts.Plan.Checked)+len(opts.Plan.Cases) {
				t.Errorf("resumed sweep checked %s again", key)
			}
		case "measurement":
			if before.clean[key] || before.measurements[key] >= 1+DefaultConfirm.MaxReruns {
				t.Errorf("resumed sweep measured %s again", key)
			}
		default:
			if before.results[stage+" "+key] {
				t.Errorf("resumed sweep redid %s %s", stage, key)
			}
		}
		taken = append(taken, stage+" "+key)
	}
	mustRun(t, opts)
	if len(taken) == 0 {
		t.Error("the resumed sweep took nothing: the kill was not in the middle")
	}
	after := readFinished(t, filepath.Join(out, StoreFile))
	for k, n := range before.measurements {
		if before.clean[k] && after.measurements[k] != n {
			t.Errorf("%s: %d complete measurements before the kill, %d after resuming", k, n, after.measurements[k])
		}
	}

	ref := filepath.Join(t.TempDir(), "uninterrupted")
	mustRun(t, fx.options(t, ref, nil))
	if got, want := masked(readReport(t, out)), masked(readReport(t, ref)); !reflect.DeepEqual(got, want) {
		t.Errorf("the resumed sweep's report differs from an uninterrupted run's (timings aside):\n%v\n%v", got, want)
	}
	refDone := readFinished(t, filepath.Join(ref, StoreFile))
	// The planted timings are never contaminated: one measurement a key.
	for k, n := range refDone.measurements {
		if n != 1 {
			t.Errorf("%s measured %d times in an uninterrupted sweep", k, n)
		}
	}
	var a, b []string
	for k := range after.results {
		a = append(a, k)
	}
	for k := range refDone.results {
		b = append(b, k)
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("the stores hold different results:\nresumed %v\nuninterrupted %v", a, b)
	}
}

// countMeasurements counts the complete measurements of the store at
// path, 0 when it cannot be read yet.
func countMeasurements(path string) int {
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	st, err := store.OpenExisting(path)
	if err != nil {
		return 0
	}
	defer st.Close()
	n := 0
	for _, stage := range []store.Stage{store.StageSummary, store.StageControl} {
		rows, err := st.Results(context.Background(), store.Query{Stage: stage})
		if err != nil {
			return 0
		}
		n += len(rows)
	}
	return n
}
