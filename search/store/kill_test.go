package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// childEnv, when set to a store path, turns the test binary into the
// writer of TestKillDurability: it runs writerChild and exits.
const childEnv = "METALAB_STORE_TEST_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		if err := writerChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The writer's sweep: items of one variant each, a check and a
// measurement of killPairs pairs; its values are a function of the item,
// so a reader can tell an intact row from a damaged one.
const (
	killItems = 40
	killPairs = 5
)

func killVariant(i int) Variant {
	return Variant{SHA256: sha(fmt.Sprint("variant ", i)), Name: fmt.Sprintf("v%02d", i), Refs: []string{fmt.Sprintf("unroll-pragma/f/%d=full", i)}}
}

func killKey(i int) Key {
	return Key{Variant: killVariant(i).SHA256, Backend: "cpu", Device: "emu", Case: fmt.Sprintf("pos0=%d", i%4*2048)}
}

func killCheck(i int) Check {
	c := Check{Status: "pass", Findings: i % 5, Message: fmt.Sprintf("item %d %s", i, strings.Repeat("x", i*37))}
	if i%4 == 3 {
		c.Status = "fail-parity"
	}
	return c
}

func killSamples(i, p int) []Sample {
	return []Sample{
		{Pair: p, Side: SideA, Order: p % 2, NS: int64(1_000_000 + i*1000 + p*10), Clock: "cpu-monotonic"},
		{Pair: p, Side: SideB, Order: 1 - p%2, NS: int64(1_000_000 + i*1000 + p*10 + 1), Clock: "cpu-monotonic"},
	}
}

func killSummary(i int) Summary {
	return Summary{Pairs: killPairs, MedianA: float64(i), MedianB: float64(i) + 0.5, Ratio: 1 + float64(i)/1000, CILevel: 0.95, Flags: []string{fmt.Sprint("item ", i)}}
}

// writerChild is a sweep that resumes: it skips what the store holds and
// prints a line after every commit ("check 3", "pair 3 1", "summary 3").
func writerChild(path string) error {
	s, err := Open(path, testPlan)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	for i := 0; i < killItems; i++ {
		if err := s.PutVariant(ctx, killVariant(i)); err != nil {
			return err
		}
		k := killKey(i)
		if ok, err := s.HasCheck(ctx, k); err != nil {
			return err
		} else if !ok {
			if err := s.PutCheck(ctx, k, killCheck(i)); err != nil {
				return err
			}
			fmt.Printf("check %d\n", i)
		}
		mk := k
		mk.Phase = "confirm"
		if ms, err := s.Measurements(ctx, mk); err != nil {
			return err
		} else if len(ms) > 0 {
			continue
		}
		id, err := s.Begin(ctx, mk)
		if err != nil {
			return err
		}
		for p := 0; p < killPairs; p++ {
			if err := s.PutSamples(ctx, id, killSamples(i, p)...); err != nil {
				return err
			}
			fmt.Printf("pair %d %d\n", i, p)
		}
		if err := s.PutSummary(ctx, id, killSummary(i)); err != nil {
			return err
		}
		fmt.Printf("summary %d\n", i)
	}
	fmt.Println("done")
	return nil
}

// TestKillDurability runs the writer in a child process and kills it with
// SIGKILL after a number of commits, three times, resuming each time; after
// each kill every commit the child reported must be in the store, intact,
// the store must pass SQLite's integrity check, and the writer's lock must
// be free. The last run finishes, and the store must then hold exactly one
// complete measurement per item and nothing incomplete.
func TestKillDurability(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("SIGKILL of a child process is a unix test")
	}
	path := filepath.Join(t.TempDir(), "results.db")
	for round, killAfter := range []int{23, 61, 97, -1} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		must(t, err)
		must(t, cmd.Start())
		var reported []string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			reported = append(reported, sc.Text())
			if len(reported) == killAfter {
				must(t, cmd.Process.Signal(syscall.SIGKILL))
				break
			}
		}
		err = cmd.Wait()
		if killAfter < 0 {
			if err != nil {
				t.Fatalf("round %d: writer: %v\n%s", round, err, stderr.String())
			}
			if len(reported) == 0 || reported[len(reported)-1] != "done" {
				t.Fatalf("round %d: the writer did not finish: %v", round, reported)
			}
		} else if len(reported) < killAfter {
			t.Fatalf("round %d: the writer stopped after %d commits (%v):\n%s", round, len(reported), err, stderr.String())
		}
		t.Logf("round %d: %d commits reported", round, len(reported))
		verifyKilled(t, path, reported)
	}

	s, err := OpenExisting(path)
	must(t, err)
	defer s.Close()
	ctx := context.Background()
	for i := 0; i < killItems; i++ {
		mk := killKey(i)
		mk.Phase = "confirm"
		ms, err := s.Measurements(ctx, mk)
		must(t, err)
		if len(ms) != 1 {
			t.Errorf("item %d: %d complete measurements, want 1", i, len(ms))
		}
	}
	var incomplete int
	must(t, s.db.QueryRow("SELECT count(*) FROM measurements WHERE id NOT IN (SELECT measurement FROM summaries)").Scan(&incomplete))
	if incomplete != 0 {
		t.Errorf("%d incomplete measurements left after the sweep finished", incomplete)
	}
}

// verifyKilled checks the store after a kill against the commits the
// writer reported, and every row it holds against the values it writes.
func verifyKilled(t *testing.T, path string, reported []string) {
	t.Helper()
	ctx := context.Background()
	// The lock died with the writer: a new writer may open the store.
	w, err := Open(path, testPlan)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	must(t, w.Close())

	s, err := OpenExisting(path)
	must(t, err)
	defer s.Close()
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	for _, line := range reported {
		f := strings.Fields(line)
		if f[0] == "done" {
			continue
		}
		i, _ := strconv.Atoi(f[1])
		mk := killKey(i)
		mk.Phase = "confirm"
		switch f[0] {
		case "check":
			if ok, err := s.HasCheck(ctx, killKey(i)); err != nil || !ok {
				t.Errorf("committed %q is lost (%v)", line, err)
			}
		case "pair":
			p, _ := strconv.Atoi(f[2])
			if !hasPair(t, s, mk, p) {
				t.Errorf("committed %q is lost", line)
			}
		case "summary":
			if ms, err := s.Measurements(ctx, mk); err != nil || len(ms) != 1 {
				t.Errorf("committed %q: %d complete measurements (%v)", line, len(ms), err)
			}
		}
	}
	// Every row present is intact.
	rows, err := s.Results(ctx, Query{})
	must(t, err)
	item := map[string]int{}
	for i := 0; i < killItems; i++ {
		item[killVariant(i).SHA256] = i
	}
	for _, r := range rows {
		if r.Variant == baseSHA {
			continue
		}
		i, ok := item[r.Variant]
		if !ok {
			t.Errorf("row of unknown variant %s", r.Variant)
			continue
		}
		switch r.Stage {
		case StageVariant:
			if v := killVariant(i); r.Name != v.Name || len(r.Refs) != 1 || r.Refs[0] != v.Refs[0] {
				t.Errorf("variant row %+v, want %+v", r, v)
			}
		case StageCheck:
			want := killCheck(i)
			want.Created = r.Check.Created
			if *r.Check != want || r.Key != killKey(i) {
				t.Errorf("check row %+v, want %+v", r.Check, want)
			}
		case StageSummary:
			got, want := *r.Summary, killSummary(i)
			if got.Pairs != want.Pairs || got.MedianA != want.MedianA || got.MedianB != want.MedianB || got.Ratio != want.Ratio || len(got.Flags) != 1 || got.Flags[0] != want.Flags[0] {
				t.Errorf("summary row %+v, want %+v", got, want)
			}
		}
	}
	// Samples of incomplete measurements too: one query over the table.
	xs, err := s.db.QueryContext(ctx, `SELECT m.variant, x.pair, x.side, x.ord, x.ns, x.clock FROM samples x JOIN measurements m ON m.id = x.measurement`)
	must(t, err)
	defer xs.Close()
	for xs.Next() {
		var v, side, clock string
		var p, ord int
		var ns int64
		must(t, xs.Scan(&v, &p, &side, &ord, &ns, &clock))
		i := item[v]
		want := killSamples(i, p)[0]
		if side == "B" {
			want = killSamples(i, p)[1]
		}
		if ord != want.Order || ns != want.NS || clock != want.Clock {
			t.Errorf("item %d pair %d side %s: order %d, %d ns, clock %s; want %+v", i, p, side, ord, ns, clock, want)
		}
	}
	must(t, xs.Err())
}

func hasPair(t *testing.T, s *Store, k Key, p int) bool {
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM samples x JOIN measurements m ON m.id = x.measurement
		WHERE m.variant = ? AND m.case_name = ? AND m.phase = ? AND x.pair = ?`, k.Variant, k.Case, k.Phase, p).Scan(&n)
	must(t, err)
	return n == 2
}

// BenchmarkPutCheck measures one committed result: a transaction with a
// synchronous WAL commit on the file system of the temporary directory.
func BenchmarkPutCheck(b *testing.B) {
	path := filepath.Join(b.TempDir(), "results.db")
	s, err := Open(path, testPlan)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	v := Variant{SHA256: sha("v"), Name: "v"}
	if err := s.PutVariant(ctx, v); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.PutCheck(ctx, Key{Variant: v.SHA256, Backend: "cpu", Case: strconv.Itoa(i)}, Check{Status: "pass"}); err != nil {
			b.Fatal(err)
		}
	}
}
