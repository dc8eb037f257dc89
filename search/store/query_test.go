package store

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// fixture fills s with a small sweep: two variants passing at both cases,
// one failing parity at pos0=30000, their compiles, timings at both cases,
// a control per case and a decision each for the timed ones.
func fixture(t *testing.T, s *Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	names := map[string]string{"baseline": baseSHA}
	for _, n := range []string{"unroll", "drop-barrier", "hoist"} {
		v := Variant{SHA256: sha(n), Name: n, Refs: []string{n + "/qsa_flash/0=x"}}
		names[n] = v.SHA256
		must(t, s.PutVariant(ctx, v))
		must(t, s.PutCompile(ctx, Key{Variant: v.SHA256, Backend: "cpu", Device: "x86-64 emulator"}, Compile{Status: "ok", TGBytes: 7616}))
		for _, c := range []string{"pos0=0", "pos0=30000"} {
			st := "pass"
			if n == "drop-barrier" && c == "pos0=30000" {
				st = "fail-race"
			}
			must(t, s.PutCheck(ctx, key(v.SHA256, c), Check{Status: st}))
		}
	}
	for _, c := range []string{"pos0=0", "pos0=30000"} {
		k := key(baseSHA, c)
		k.Phase = "confirm"
		measure(t, s, k, 3, 1000, 1002, false)
		for _, n := range []string{"unroll", "hoist"} {
			k := key(names[n], c)
			k.Phase = "confirm"
			measure(t, s, k, 3, 1000, 950, n == "hoist" && c == "pos0=30000")
		}
	}
	must(t, s.PutDecision(ctx, Key{Variant: names["unroll"], Backend: "cpu", Device: "x86-64 emulator", Phase: "confirm"}, Decision{Verdict: "retain"}))
	must(t, s.PutDecision(ctx, Key{Variant: names["hoist"], Backend: "cpu", Device: "x86-64 emulator", Phase: "confirm"}, Decision{Verdict: "inconclusive", Reasons: []string{"contaminated at pos0=30000"}}))
	// An interrupted measurement never shows in queries.
	id, err := s.Begin(ctx, Key{Variant: names["unroll"], Backend: "cpu", Device: "x86-64 emulator", Case: "pos0=0", Phase: "explore"})
	must(t, err)
	must(t, s.PutSamples(ctx, id, Sample{Pair: 0, Side: SideA, NS: 1, Clock: "cpu-monotonic"}))
	return names
}

func TestResults(t *testing.T) {
	s, _ := tempStore(t)
	names := fixture(t, s)
	tests := []struct {
		name    string
		q       Query
		want    []string // stage name case phase status, per row
		wantErr string
	}{
		{name: "passed parity at pos0=30000", q: Query{Stage: StageCheck, Case: "pos0=30000", Status: "pass"},
			want: []string{"check hoist pos0=30000 - pass", "check unroll pos0=30000 - pass"}},
		{name: "failed anything", q: Query{Stage: StageCheck, Status: "fail-race"},
			want: []string{"check drop-barrier pos0=30000 - fail-race"}},
		{name: "timings of a variant by name", q: Query{Stage: StageSample, Variant: "unroll", Case: "pos0=0"},
			want: repeat("sample unroll pos0=0 confirm -", 6)},
		{name: "timings of a variant by sha256 prefix", q: Query{Stage: StageSample, Variant: names["unroll"][:10]},
			want: append(repeat("sample unroll pos0=0 confirm -", 6), repeat("sample unroll pos0=30000 confirm -", 6)...)},
		{name: "decisions", q: Query{Stage: StageDecision},
			want: []string{"decision hoist - confirm inconclusive", "decision unroll - confirm retain"}},
		{name: "retained", q: Query{Stage: StageDecision, Status: "retain"}, want: []string{"decision unroll - confirm retain"}},
		{name: "controls", q: Query{Stage: StageControl},
			want: []string{"control baseline pos0=0 confirm clean", "control baseline pos0=30000 confirm clean"}},
		{name: "contaminated", q: Query{Status: "contaminated"}, want: []string{"summary hoist pos0=30000 confirm contaminated"}},
		{name: "everything about one variant at one case", q: Query{Variant: "hoist", Case: "pos0=0"},
			want: append(append([]string{"check hoist pos0=0 - pass"}, repeat("sample hoist pos0=0 confirm -", 6)...), "summary hoist pos0=0 confirm clean")},
		{name: "variants", q: Query{Stage: StageVariant},
			want: []string{"variant baseline - - -", "variant drop-barrier - - -", "variant hoist - - -", "variant unroll - - -"}},
		{name: "compiles ok", q: Query{Stage: StageCompile, Status: "ok"},
			want: []string{"compile drop-barrier - - ok", "compile hoist - - ok", "compile unroll - - ok"}},
		{name: "other backend", q: Query{Backend: "metal"}},
		{name: "limit", q: Query{Limit: 2}, want: []string{"variant baseline - - -", "variant drop-barrier - - -"}},
		{name: "unknown variant", q: Query{Variant: "nope"}},
		{name: "bad stage", q: Query{Stage: "timing"}, wantErr: `unknown stage "timing"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := s.Results(context.Background(), tt.q)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Results: %v, want %q", err, tt.wantErr)
				}
				return
			}
			must(t, err)
			var got []string
			for _, r := range rows {
				got = append(got, fmt.Sprintf("%s %s %s %s %s", r.Stage, r.Name, dash(r.Case), dash(r.Phase), dash(r.Status)))
				if r.Variant != names[r.Name] {
					t.Errorf("row %s: variant %s, want %s", r.Name, r.Variant, names[r.Name])
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Results(%+v) =\n%s\nwant\n%s", tt.q, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestResultsSamplesInOrder(t *testing.T) {
	s, _ := tempStore(t)
	names := fixture(t, s)
	rows, err := s.Results(context.Background(), Query{Stage: StageSample, Variant: names["hoist"], Case: "pos0=30000"})
	must(t, err)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d%s:%d:%d", r.Sample.Pair, r.Sample.Side, r.Sample.Order, r.Sample.NS))
	}
	want := []string{"0A:0:1000", "0B:1:950", "1A:1:1001", "1B:0:951", "2A:0:1002", "2B:1:952"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("samples = %v, want %v", got, want)
	}
}

// TestRowJSON pins the field names a Row encodes with: metalab results
// --json prints them and scripts read them.
func TestRowJSON(t *testing.T) {
	s, _ := tempStore(t)
	fixture(t, s)
	ctx := context.Background()
	for _, tt := range []struct {
		q    Query
		want []string
	}{
		{Query{Stage: StageCheck, Limit: 1}, []string{"stage", "variant", "backend", "device", "case", "name", "refs", "status", "check"}},
		{Query{Stage: StageSample, Variant: "unroll", Limit: 1}, []string{"stage", "variant", "backend", "device", "case", "phase", "name", "refs", "measurement", "sample"}},
		{Query{Stage: StageSummary, Limit: 1}, []string{"stage", "variant", "backend", "device", "case", "phase", "name", "refs", "status", "measurement", "summary"}},
		{Query{Stage: StageDecision, Limit: 1}, []string{"stage", "variant", "backend", "device", "phase", "name", "refs", "status", "decision"}},
	} {
		rows, err := s.Results(ctx, tt.q)
		must(t, err)
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows", tt.q.Stage, len(rows))
		}
		b, err := json.Marshal(rows[0])
		must(t, err)
		var m map[string]json.RawMessage
		must(t, json.Unmarshal(b, &m))
		var got []string
		for _, k := range tt.want {
			if _, ok := m[k]; !ok {
				t.Errorf("%s row %s lacks %q", tt.q.Stage, b, k)
			}
			got = append(got, k)
		}
		if len(m) != len(tt.want) {
			t.Errorf("%s row has fields %s, want exactly %v", tt.q.Stage, b, got)
		}
	}
	rows, _ := s.Results(ctx, Query{Stage: StageSummary, Limit: 1})
	b, _ := json.Marshal(rows[0].Summary)
	for _, f := range []string{`"pairs":3`, `"median_a_ns":1000`, `"ratio":0.95`, `"ci_low":`, `"ci_high":`, `"ci_level":0.95`, `"ratio_min":`, `"contaminated":false`, `"flags":`} {
		if !strings.Contains(string(b), f) {
			t.Errorf("summary JSON %s lacks %s", b, f)
		}
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
