package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	s := openTest(t, path, testPlan)
	want, err := testPlan.Hash()
	must(t, err)
	if s.PlanHash() != want || s.Baseline() != baseSHA {
		t.Fatalf("plan %s baseline %s, want %s %s", s.PlanHash(), s.Baseline(), want, baseSHA)
	}
	ctx := context.Background()
	v, ok, err := s.Variant(ctx, baseSHA)
	if err != nil || !ok || v.Name != "baseline" {
		t.Fatalf("baseline variant = %+v, %v, %v; want it recorded as baseline", v, ok, err)
	}
	must(t, s.Close())

	// The same plan with other white space is the same plan.
	var indented bytes.Buffer
	must(t, json.Indent(&indented, testPlan.JSON, "", "\t"))
	s2 := openTest(t, path, Plan{Baseline: baseSHA, JSON: indented.Bytes()})
	if s2.PlanHash() != want {
		t.Errorf("reopened plan hash %s, want %s", s2.PlanHash(), want)
	}
	must(t, s2.Close())

	r, err := OpenExisting(path)
	must(t, err)
	defer r.Close()
	if r.PlanHash() != want || string(r.PlanJSON()) != `{"strategy":"ablate","cases":["pos0=0","pos0=30000"],"pairs":7}` {
		t.Errorf("OpenExisting: plan %s %s", r.PlanHash(), r.PlanJSON())
	}
	must(t, r.IntegrityCheck(ctx))
}

func TestOpenRefuses(t *testing.T) {
	otherPlan := Plan{Baseline: baseSHA, JSON: json.RawMessage(`{"strategy": "greedy"}`)}
	otherBase := Plan{Baseline: sha("another baseline"), JSON: testPlan.JSON}
	planHash, _ := testPlan.Hash()
	otherHash, _ := otherPlan.Hash()
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string)
		plan    Plan
		wantErr error
		wantMsg []string
	}{
		{name: "other plan", setup: made, plan: otherPlan, wantErr: ErrOtherPlan, wantMsg: []string{planHash, otherHash}},
		{name: "other baseline", setup: made, plan: otherBase, wantErr: ErrOtherBaseline, wantMsg: []string{baseSHA, otherBase.Baseline}},
		{name: "other plan and baseline", setup: made, plan: Plan{Baseline: otherBase.Baseline, JSON: otherPlan.JSON}, wantErr: ErrOtherBaseline},
		{name: "text file", setup: func(t *testing.T, path string) {
			must(t, os.WriteFile(path, []byte("my notes\n"), 0o644))
		}, plan: testPlan, wantErr: ErrNotStore},
		{name: "other sqlite database", setup: func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			must(t, err)
			_, err = db.Exec("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('keep me')")
			must(t, err)
			must(t, db.Close())
		}, plan: testPlan, wantErr: ErrNotStore},
		{name: "newer schema", setup: func(t *testing.T, path string) {
			made(t, path)
			db, err := sql.Open("sqlite", path)
			must(t, err)
			_, err = db.Exec("INSERT INTO schema_migrations VALUES (99, 'later')")
			must(t, err)
			must(t, db.Close())
		}, plan: testPlan, wantErr: ErrNewerSchema},
		{name: "in use", setup: func(t *testing.T, path string) {
			openTest(t, path, testPlan) // closed at cleanup, after the test
		}, plan: testPlan, wantErr: ErrInUse},
		{name: "bad baseline", setup: func(*testing.T, string) {}, plan: Plan{Baseline: "abc", JSON: testPlan.JSON}, wantMsg: []string{`baseline "abc" is not a hex sha256`}},
		{name: "bad plan json", setup: func(*testing.T, string) {}, plan: Plan{Baseline: baseSHA, JSON: json.RawMessage(`{"a":`)}, wantMsg: []string{"plan json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.db")
			tt.setup(t, path)
			before, _ := os.ReadFile(path)
			s, err := Open(path, tt.plan)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Open: %v, want %v", err, tt.wantErr)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("Open: %v; want it to say %q", err, m)
				}
			}
			after, _ := os.ReadFile(path)
			if tt.name != "in use" && !bytes.Equal(before, after) {
				t.Errorf("the refused file changed (%d bytes before, %d after)", len(before), len(after))
			}
			if errors.Is(err, ErrNotStore) {
				ents, _ := os.ReadDir(filepath.Dir(path))
				if len(ents) != 1 {
					var names []string
					for _, e := range ents {
						names = append(names, e.Name())
					}
					t.Errorf("refusing a file that is not a store left %v beside it", names)
				}
			}
		})
	}
}

// made makes a store for testPlan at path.
func made(t *testing.T, path string) {
	s, err := Open(path, testPlan)
	must(t, err)
	must(t, s.Close())
}

func TestOpenExistingMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	if _, err := OpenExisting(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenExisting of a missing file: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExisting created %s", path)
	}
}

func TestReadOnly(t *testing.T) {
	_, path := tempStore(t)
	r, err := OpenExisting(path)
	must(t, err)
	defer r.Close()
	err = r.PutVariant(context.Background(), Variant{SHA256: sha("v"), Name: "v"})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("PutVariant on a read-only store: %v", err)
	}
}

func TestRecords(t *testing.T) {
	s, path := tempStore(t)
	ctx := context.Background()
	v1 := Variant{SHA256: sha("v1"), Name: "unroll-pragma.qsa_flash.3=full-1a2b3c4d", Refs: []string{"unroll-pragma/qsa_flash/3-bfd9e1=full"}}
	must(t, s.PutVariant(ctx, v1))
	must(t, s.PutVariant(ctx, v1)) // same again: no-op
	if err := s.PutVariant(ctx, Variant{SHA256: v1.SHA256, Name: "other"}); err == nil {
		t.Error("PutVariant of a known sha256 under another name succeeded")
	}

	// Compiles.
	ck := Key{Variant: v1.SHA256, Backend: "cpu", Device: "emu"}
	must(t, s.PutCompile(ctx, ck, Compile{Status: "ok", TGBytes: 13760, Log: "warning: x"}))
	if err := s.PutCompile(ctx, ck, Compile{Status: "ok"}); !errors.Is(err, ErrExists) {
		t.Errorf("second PutCompile: %v, want ErrExists", err)
	}
	if err := s.PutCompile(ctx, Key{Variant: sha("never recorded"), Backend: "cpu"}, Compile{Status: "ok"}); !errors.Is(err, ErrUnknownVariant) {
		t.Errorf("PutCompile of an unknown variant: %v, want ErrUnknownVariant", err)
	}
	if c, ok, err := s.Compile(ctx, ck); err != nil || !ok || c.TGBytes != 13760 || c.Log != "warning: x" || c.Created.IsZero() {
		t.Errorf("Compile = %+v, %v, %v", c, ok, err)
	}

	// Checks.
	k := key(v1.SHA256, "pos0=30000")
	if ok, err := s.HasCheck(ctx, k); err != nil || ok {
		t.Fatalf("HasCheck before = %v, %v", ok, err)
	}
	must(t, s.PutCheck(ctx, k, Check{Status: "fail-race", Message: "simd groups 0 and 1 race on sp[3]", Findings: 2}))
	if ok, err := s.HasCheck(ctx, k); err != nil || !ok {
		t.Fatalf("HasCheck after = %v, %v", ok, err)
	}
	if ok, _ := s.HasCheck(ctx, key(v1.SHA256, "pos0=0")); ok {
		t.Error("HasCheck of another case reports true")
	}
	if err := s.PutCheck(ctx, k, Check{Status: "pass"}); !errors.Is(err, ErrExists) {
		t.Errorf("second PutCheck: %v, want ErrExists", err)
	}
	for _, bad := range []Key{{Variant: v1.SHA256, Backend: "cpu"}, {Variant: "v1", Backend: "cpu", Case: "c"}, {Variant: v1.SHA256, Case: "c"}, {Variant: v1.SHA256, Backend: "cpu", Case: "c", Phase: "confirm"}} {
		if err := s.PutCheck(ctx, bad, Check{Status: "pass"}); err == nil {
			t.Errorf("PutCheck(%+v) succeeded", bad)
		}
	}

	// Measurements: an interrupted one is discarded by the next Begin.
	mk := k
	mk.Phase = "confirm"
	partial, err := s.Begin(ctx, mk)
	must(t, err)
	must(t, s.PutSamples(ctx, partial, Sample{Pair: 0, Side: SideA, NS: 100, Clock: "gpu"}, Sample{Pair: 0, Side: SideB, Order: 1, NS: 90, Clock: "gpu"}))
	if ms, err := s.Measurements(ctx, mk); err != nil || len(ms) != 0 {
		t.Fatalf("Measurements with only an incomplete one = %v, %v", ms, err)
	}
	id := measure(t, s, mk, 7, 66_299_000, 65_770_000, false)
	if err := s.PutSamples(ctx, partial, Sample{Pair: 1, Side: SideA, NS: 1, Clock: "gpu"}); !errors.Is(err, ErrNoMeasurement) {
		t.Errorf("PutSamples to a discarded measurement: %v, want ErrNoMeasurement", err)
	}
	if x, _ := s.Samples(ctx, partial); len(x) != 0 {
		t.Errorf("the discarded measurement kept %d samples", len(x))
	}
	if err := s.PutSamples(ctx, id, Sample{Pair: 9, Side: SideA, NS: 1, Clock: "gpu"}); !errors.Is(err, ErrComplete) {
		t.Errorf("PutSamples to a complete measurement: %v, want ErrComplete", err)
	}
	if err := s.PutSummary(ctx, id, Summary{}); !errors.Is(err, ErrComplete) {
		t.Errorf("second PutSummary: %v, want ErrComplete", err)
	}
	id2, err := s.Begin(ctx, mk)
	must(t, err)
	must(t, s.PutSamples(ctx, id2, Sample{Pair: 0, Side: SideA, NS: 5, Clock: "gpu"}))
	if err := s.PutSamples(ctx, id2, Sample{Pair: 0, Side: SideA, NS: 6, Clock: "gpu"}); !errors.Is(err, ErrExists) {
		t.Errorf("the same sample twice: %v, want ErrExists", err)
	}
	for _, bad := range []Sample{{Pair: -1, Side: SideA, Clock: "gpu"}, {Side: "C", Clock: "gpu"}, {Side: SideA, Order: 2, Clock: "gpu"}, {Side: SideA, NS: -1, Clock: "gpu"}, {Side: SideB}} {
		if err := s.PutSamples(ctx, id2, bad); err == nil {
			t.Errorf("PutSamples(%+v) succeeded", bad)
		}
	}
	if _, err := s.Begin(ctx, Key{Variant: v1.SHA256, Backend: "cpu"}); err == nil {
		t.Error("Begin without a case succeeded")
	}
	if err := s.PutSummary(ctx, "nope", Summary{}); !errors.Is(err, ErrNoMeasurement) {
		t.Errorf("PutSummary of an unknown measurement: %v", err)
	}
	if err := s.PutSummary(ctx, id2, Summary{Ratio: nan()}); err == nil {
		t.Error("PutSummary with a NaN ratio succeeded")
	}
	if err := s.PutSummary(ctx, id2, Summary{Detail: json.RawMessage("{")}); err == nil {
		t.Error("PutSummary with bad detail JSON succeeded")
	}

	// Decisions.
	dk := Key{Variant: v1.SHA256, Backend: "cpu", Device: "x86-64 emulator", Phase: "confirm"}
	d := Decision{Verdict: "retain", Reasons: []string{"CI upper bound 0.975 < 0.97 at every case"}, Rule: "retain if ...", Detail: json.RawMessage(`{"x": 1}`)}
	must(t, s.PutDecision(ctx, dk, d))
	if err := s.PutDecision(ctx, dk, d); !errors.Is(err, ErrExists) {
		t.Errorf("second PutDecision: %v", err)
	}
	must(t, s.Close())

	// Everything survives a reopen; the second, incomplete measurement is
	// still there until the next Begin of its key.
	s = openTest(t, path, testPlan)
	ms, err := s.Measurements(ctx, mk)
	must(t, err)
	if len(ms) != 1 || ms[0].ID != id || ms[0].Summary == nil || ms[0].Summary.Pairs != 7 || ms[0].Summary.MedianA != 66_299_000 || ms[0].Key != mk {
		t.Fatalf("Measurements = %+v", ms)
	}
	x, err := s.Samples(ctx, id)
	must(t, err)
	if len(x) != 14 || x[0] != (Sample{Pair: 0, Side: SideA, Order: 0, NS: 66_299_000, Clock: "cpu-monotonic", Taken: x[0].Taken}) || x[13].Side != SideB || x[13].NS != 65_770_006 {
		t.Errorf("Samples = %+v", x)
	}
	if got, ok, err := s.Decision(ctx, dk); err != nil || !ok || got.Verdict != "retain" || string(got.Detail) != `{"x":1}` || len(got.Reasons) != 1 {
		t.Errorf("Decision = %+v, %v, %v", got, ok, err)
	}
	if c, ok, _ := s.Check(ctx, k); !ok || c.Status != "fail-race" || c.Findings != 2 {
		t.Errorf("Check = %+v", c)
	}
	if inc, _ := s.Samples(ctx, id2); len(inc) != 1 {
		t.Errorf("incomplete measurement has %d samples after reopen, want 1", len(inc))
	}
	must(t, s.IntegrityCheck(ctx))
}

func nan() float64 {
	var z float64
	return z / z
}

// TestDurabilitySettings pins the settings the package doc promises: every
// connection in WAL mode with synchronous=FULL (2), foreign keys on.
func TestDurabilitySettings(t *testing.T) {
	s, _ := tempStore(t)
	ctx := context.Background()
	for _, tt := range []struct {
		pragma, want string
	}{{"journal_mode", "wal"}, {"synchronous", "2"}, {"foreign_keys", "1"}, {"application_id", "1296847443"}} {
		var got string
		must(t, s.db.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got))
		if got != tt.want {
			t.Errorf("PRAGMA %s = %s, want %s", tt.pragma, got, tt.want)
		}
	}
}

// TestReadWhileWriting: metalab results reads a store a sweep is writing.
func TestReadWhileWriting(t *testing.T) {
	s, path := tempStore(t)
	ctx := context.Background()
	must(t, s.PutVariant(ctx, Variant{SHA256: sha("v"), Name: "v"}))
	r, err := OpenExisting(path)
	must(t, err)
	defer r.Close()
	for i, c := range []string{"pos0=0", "pos0=30000"} {
		must(t, s.PutCheck(ctx, key(sha("v"), c), Check{Status: "pass"}))
		rows, err := r.Results(ctx, Query{Stage: StageCheck})
		must(t, err)
		if len(rows) != i+1 {
			t.Errorf("reader sees %d checks after %d were committed", len(rows), i+1)
		}
	}
}
