package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// shard makes a store at dir/name holding variant n checked at both cases,
// timed at pos0=0, and a control at pos0=0 (every shard measures its own).
func shard(t *testing.T, dir, name string, variants ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	s, err := Open(path, testPlan)
	must(t, err)
	defer s.Close()
	ctx := context.Background()
	ctl := key(baseSHA, "pos0=0")
	ctl.Phase = "confirm"
	measure(t, s, ctl, 3, 1000, 1001, false)
	for _, n := range variants {
		v := Variant{SHA256: sha(n), Name: n}
		must(t, s.PutVariant(ctx, v))
		must(t, s.PutCompile(ctx, Key{Variant: v.SHA256, Backend: "cpu", Device: "x86-64 emulator"}, Compile{Status: "ok", TGBytes: 100}))
		for _, c := range []string{"pos0=0", "pos0=30000"} {
			must(t, s.PutCheck(ctx, key(v.SHA256, c), Check{Status: "pass"}))
		}
		k := key(v.SHA256, "pos0=0")
		k.Phase = "confirm"
		measure(t, s, k, 3, 1000, 900, false)
		must(t, s.PutDecision(ctx, Key{Variant: v.SHA256, Backend: "cpu", Device: "x86-64 emulator", Phase: "confirm"}, Decision{Verdict: "retain"}))
	}
	return path
}

// dump lists every row of every table of the store at path, sorted, with
// the timestamps the rows were copied with.
func dump(t *testing.T, path string) []string {
	t.Helper()
	s, err := OpenExisting(path)
	must(t, err)
	defer s.Close()
	var out []string
	for _, table := range []string{"plans", "variants", "compiles", "checks", "measurements", "samples", "summaries", "decisions"} {
		cols, rows, err := readRows(context.Background(), s.db, "SELECT * FROM "+table)
		must(t, err)
		for _, r := range rows {
			var parts []string
			for i, c := range cols {
				parts = append(parts, fmt.Sprintf("%s=%v", c, r[i]))
			}
			out = append(out, table+": "+strings.Join(parts, " "))
		}
	}
	sort.Strings(out)
	return out
}

func count(rows []string, prefix string) int {
	n := 0
	for _, r := range rows {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.db", "unroll", "hoist")
	b := shard(t, dir, "b.db", "drop-barrier")
	dst := filepath.Join(dir, "all.db")
	must(t, Merge(dst, a, b))
	got := dump(t, dst)
	// 3 variants and the baseline; 2 + 1 timed variants and one control per shard.
	for prefix, want := range map[string]int{"plans:": 1, "variants:": 4, "compiles:": 3, "checks:": 6, "measurements:": 5, "samples:": 30, "summaries:": 5, "decisions:": 3} {
		if n := count(got, prefix); n != want {
			t.Errorf("%d %s rows after merge, want %d", n, prefix, want)
		}
	}
	// Every row of each shard is in the merged store, unchanged.
	for _, src := range []string{a, b} {
		have := map[string]bool{}
		for _, r := range got {
			have[r] = true
		}
		for _, r := range dump(t, src) {
			if strings.HasPrefix(r, "plans:") || strings.Contains(r, "name=baseline ") {
				continue // made when the merged store was, with its own time
			}
			if !have[r] {
				t.Errorf("merged store lacks %s's row %s", filepath.Base(src), r)
			}
		}
	}

	// Idempotent: merging again, in any order, adds nothing.
	must(t, Merge(dst, b, a))
	must(t, Merge(dst, a))
	if again := dump(t, dst); !reflect.DeepEqual(again, got) {
		t.Errorf("merging twice changed the store: %d rows, then %d", len(got), len(again))
	}
	// A store merged into itself adds nothing either.
	must(t, Merge(dst, dst))
	if again := dump(t, dst); !reflect.DeepEqual(again, got) {
		t.Error("merging a store into itself changed it")
	}

	// The merged store answers queries over both shards.
	s, err := OpenExisting(dst)
	must(t, err)
	defer s.Close()
	rows, err := s.Results(context.Background(), Query{Stage: StageControl})
	must(t, err)
	if len(rows) != 2 {
		t.Errorf("%d controls after merge, want both shards' (2)", len(rows))
	}
	must(t, s.IntegrityCheck(context.Background()))
}

func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	a := shard(t, dir, "a.db", "unroll")
	otherPlan := filepath.Join(dir, "other-plan.db")
	made2(t, otherPlan, Plan{Baseline: baseSHA, JSON: json.RawMessage(`{"strategy":"greedy"}`)})
	otherBase := filepath.Join(dir, "other-base.db")
	made2(t, otherBase, Plan{Baseline: sha("x"), JSON: testPlan.JSON})
	notStore := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(notStore, []byte("notes"), 0o644))

	// A shard that checked the same variant and case with another outcome.
	conflict := filepath.Join(dir, "conflict.db")
	func() {
		s, err := Open(conflict, testPlan)
		must(t, err)
		defer s.Close()
		ctx := context.Background()
		must(t, s.PutVariant(ctx, Variant{SHA256: sha("unroll"), Name: "unroll"}))
		must(t, s.PutCheck(ctx, key(sha("unroll"), "pos0=30000"), Check{Status: "fail-race", Message: "race on sp[3]"}))
	}()

	tests := []struct {
		name    string
		dst     func() string // an existing store, or a new path
		srcs    []string
		wantErr error
		wantMsg string
	}{
		{"other plan into new", newPath(dir, "n1.db"), []string{a, otherPlan}, ErrOtherPlan, ""},
		{"other baseline into new", newPath(dir, "n2.db"), []string{a, otherBase}, ErrOtherBaseline, ""},
		{"other plan into existing", copyOf(t, a, dir, "e1.db"), []string{otherPlan}, ErrOtherPlan, ""},
		{"not a store", copyOf(t, a, dir, "e2.db"), []string{notStore}, ErrNotStore, ""},
		{"missing source", copyOf(t, a, dir, "e3.db"), []string{filepath.Join(dir, "missing.db")}, os.ErrNotExist, ""},
		{"conflicting check", copyOf(t, a, dir, "e4.db"), []string{conflict}, nil, "check variant " + sha("unroll")[:12]},
		{"no sources", copyOf(t, a, dir, "e5.db"), nil, nil, "no source stores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := tt.dst()
			_, statErr := os.Stat(dst)
			var before []string
			if statErr == nil {
				before = dump(t, dst)
			}
			err := Merge(dst, tt.srcs...)
			if err == nil {
				t.Fatal("Merge succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Merge: %v, want %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Merge: %v, want it to say %q", err, tt.wantMsg)
			}
			if strings.HasPrefix(tt.name, "conflicting") {
				var ce *ConflictError
				if !errors.As(err, &ce) || ce.Stage != StageCheck || ce.Key.Case != "pos0=30000" || !strings.Contains(ce.Have, "pass") || !strings.Contains(ce.Got, "fail-race") {
					t.Errorf("Merge: %#v, want a ConflictError naming the check, pass and fail-race", err)
				}
			}
			if statErr != nil {
				if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a refused merge left a new store at %s", dst)
				}
				return
			}
			if after := dump(t, dst); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused merge changed the destination")
			}
		})
	}
}

// TestMergeCompletesInterrupted: a destination copied from a shard while a
// measurement was under way holds it incomplete; merging the shard after
// the measurement finished replaces it with the complete one, and an
// incomplete measurement in a source is never copied.
func TestMergeCompletesInterrupted(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "shard.db")
	s, err := Open(src, testPlan)
	must(t, err)
	ctx := context.Background()
	k := key(baseSHA, "pos0=0")
	id, err := s.Begin(ctx, k)
	must(t, err)
	must(t, s.PutSamples(ctx, id, Sample{Pair: 0, Side: SideA, NS: 5, Clock: "gpu"}))
	must(t, s.Close())

	dst := copyOf(t, src, dir, "dst.db")()
	other := filepath.Join(dir, "other.db")
	func() {
		o, err := Open(other, testPlan)
		must(t, err)
		defer o.Close()
		oid, err := o.Begin(ctx, key(baseSHA, "pos0=30000"))
		must(t, err)
		must(t, o.PutSamples(ctx, oid, Sample{Pair: 0, Side: SideA, NS: 7, Clock: "gpu"}))
	}()

	s, err = Open(src, testPlan)
	must(t, err)
	for p := 1; p < 3; p++ {
		must(t, s.PutSamples(ctx, id, Sample{Pair: p, Side: SideA, NS: int64(5 + p), Clock: "gpu"}))
	}
	must(t, s.PutSummary(ctx, id, Summary{Pairs: 3}))
	must(t, s.Close())

	must(t, Merge(dst, src, other))
	d, err := OpenExisting(dst)
	must(t, err)
	defer d.Close()
	x, err := d.Samples(ctx, id)
	must(t, err)
	ms, err := d.Measurements(ctx, k)
	must(t, err)
	if len(x) != 3 || len(ms) != 1 || ms[0].ID != id {
		t.Errorf("after merge: %d samples, measurements %+v; want the complete measurement with 3 samples", len(x), ms)
	}
	var n int
	must(t, d.db.QueryRow("SELECT count(*) FROM measurements WHERE case_name = 'pos0=30000'").Scan(&n))
	if n != 0 {
		t.Errorf("an incomplete measurement of a source was merged")
	}
}

func made2(t *testing.T, path string, p Plan) {
	s, err := Open(path, p)
	must(t, err)
	must(t, s.Close())
}

func newPath(dir, name string) func() string {
	return func() string { return filepath.Join(dir, name) }
}

// copyOf returns a func making a copy of the closed store src (its WAL is
// checkpointed at close) at dir/name.
func copyOf(t *testing.T, src, dir, name string) func() string {
	return func() string {
		dst := filepath.Join(dir, name)
		in, err := os.Open(src)
		must(t, err)
		defer in.Close()
		out, err := os.Create(dst)
		must(t, err)
		_, err = io.Copy(out, in)
		must(t, err)
		must(t, out.Close())
		return dst
	}
}
