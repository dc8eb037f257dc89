package report

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goldenReports renders every golden input's report.md and report.json.
func goldenReports(t *testing.T) map[string][2]string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	out := map[string][2]string{}
	for _, f := range files {
		in := goldenInput(t, filepath.Base(f))
		got, err := Files(in)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = [2]string{string(got["report.md"]), string(got["report.json"])}
	}
	return out
}

var gainCell = regexp.MustCompile(`\| ([+-]\d+\.\d\d)%( faster| slower)?(, contaminated)? \|`)

// TestOneGainConvention: every table states the gain as the rule's
// reasons do (positive is faster), says faster or slower in words with
// the sign, and nothing speaks of a change where negative is faster.
func TestOneGainConvention(t *testing.T) {
	reasonGain := regexp.MustCompile("`([^`]+)`: \\*\\*[a-z]+\\*\\*[^\\n]*?target ([^:]+): median gain ([+-]\\d+\\.\\d\\d)%")
	for name, r := range goldenReports(t) {
		md := r[0]
		for _, bad := range []string{"| change |", "negative is faster", "minus one"} {
			if strings.Contains(md, bad) {
				t.Errorf("%s: report.md says %q", name, bad)
			}
		}
		cells := gainCell.FindAllStringSubmatch(md, -1)
		if strings.Contains(md, "| gain |") && len(cells) == 0 {
			t.Errorf("%s: a gain column without gains", name)
		}
		for _, c := range cells {
			v, _ := strconv.ParseFloat(c[1], 64)
			want := map[bool]string{true: " faster", false: " slower"}[v > 0]
			if v == 0 {
				want = ""
			}
			if c[2] != want {
				t.Errorf("%s: gain %s%% says %q, want %q", name, c[1], c[2], want)
			}
		}
		// A reason's median gain is the table's gain at that case.
		for _, m := range reasonGain.FindAllStringSubmatch(md, -1) {
			row := regexp.MustCompile("\\| `" + regexp.QuoteMeta(m[1]) + "` \\| " + regexp.QuoteMeta(m[2]) + " \\|[^\\n]*\\| " + regexp.QuoteMeta(m[3]) + "% (faster|slower)")
			if !row.MatchString(md) {
				t.Errorf("%s: %s's reason says a median gain of %s%% at %s, its row does not", name, m[1], m[3], m[2])
			}
		}
	}
}

// TestAttemptsAgree: a reason that counts a measurement's attempts
// counts them as its contamination note does.
func TestAttemptsAgree(t *testing.T) {
	count := regexp.MustCompile("- `([^`]+)`: \\*\\*[a-z]+\\*\\*[^\\n]*contaminated in (?:all (\\d+) attempts|its (only) attempt)")
	for name, r := range goldenReports(t) {
		md := r[0]
		for _, m := range count.FindAllStringSubmatch(md, -1) {
			n := m[2]
			if m[3] == "only" {
				n = "1"
			}
			note := regexp.MustCompile("(?m)^- `" + regexp.QuoteMeta(m[1]) + "`[^\\n]*(?:, " + n + " of " + n + " attempts contaminated|\\(" + n + " contaminated attempts?\\))")
			if !note.MatchString(md) {
				t.Errorf("%s: %s's reason counts %s contaminated attempts, its contamination note does not", name, m[1], n)
			}
		}
	}

	// report.json's reasons count as report.md's do.
	js := goldenReports(t)["hand_tune_tolerance.txtar"][1]
	if strings.Contains(js, "contaminated in all 1 attempts") || !strings.Contains(js, "contaminated in all 3 attempts") {
		t.Errorf("report.json's reasons do not count the attempts its contamination notes do")
	}

	in := &Input{Contamination: []Note{
		{Variant: "v", Case: "full", Phase: "confirm", Text: "attempt 1: x; attempt 2: x; attempt 3: x", Attempts: 3, ContaminatedAttempts: 3},
		{Variant: "v", Case: "full", Phase: "explore", Text: "attempt 1: y", Attempts: 1, ContaminatedAttempts: 1},
		{Variant: "w", Case: "full", Text: "confirm (2 contaminated attempts): attempt 1: x; attempt 2: x; every attempt was contaminated: it decides nothing"},
		{Variant: "w", Case: "full", Text: "confirmation-1 (4 contaminated attempts): ..."},
	}}
	for _, tt := range []struct{ variant, reason, want string }{
		{"v", "target full: contaminated in all 1 attempts; last: x", "target full: contaminated in all 3 attempts; last: x"},
		{"v", "case full: contaminated in all 1 attempts; last: x", "case full: contaminated in all 3 attempts; last: x"},
		{"w", "target full: contaminated in all 1 attempts; last: x", "target full: contaminated in all 2 attempts; last: x"},
		{"w", "confirmation 1: contaminated in all 1 attempts; last: x", "confirmation 1: contaminated in all 4 attempts; last: x"},
		{"v", "target other: contaminated in all 1 attempts", "target other: contaminated in all 1 attempts"}, // no note at that case
		{"u", "target full: contaminated in all 2 attempts", "target full: contaminated in all 2 attempts"},   // no note of that variant
		{"v", "target full: median gain +1.00% < 3.00%", "target full: median gain +1.00% < 3.00%"},
	} {
		if got := attemptsFixed(in, tt.variant, tt.reason); got != tt.want {
			t.Errorf("attemptsFixed(%s, %q) = %q, want %q", tt.variant, tt.reason, got, tt.want)
		}
	}
	in.Contamination = []Note{{Variant: "v", Case: "full", Phase: "confirm", Text: "x", Attempts: 1, ContaminatedAttempts: 1}}
	if got := attemptsFixed(in, "v", "target full: contaminated in all 3 attempts; last: x"); got != "target full: contaminated in its only attempt; last: x" {
		t.Errorf("one attempt: %q", got)
	}
}

// TestNothingTimedOnlyWhenNothingWas: "No variant was timed." never
// stands above a table of timings.
func TestNothingTimedOnlyWhenNothingWas(t *testing.T) {
	seen := false
	for name, r := range goldenReports(t) {
		md := r[0]
		if strings.Contains(md, "No variant was timed.") && gainCell.MatchString(md) {
			t.Errorf("%s: says no variant was timed and shows timings", name)
		}
		if strings.Contains(md, "No variant was confirmed: ") {
			seen = true
			if !strings.Contains(md, "## Exploratory ablation") {
				t.Errorf("%s: points at an exploration it does not show", name)
			}
		}
	}
	if !seen {
		t.Error("no golden has variants timed in the exploration only")
	}
}

// TestShownOnlyWhenUsed: the columns and lines of hand-written variants,
// tune points, patch scope and tolerances appear when an input uses
// them and only then, in report.md and report.json.
func TestShownOnlyWhenUsed(t *testing.T) {
	md := []string{"| origin |", "| point |", "| outside --fn |", "| parity |", "**Not bitwise:**", "- tunable parameters:", "- patch scope:", "hand-written `", "patch refused:", "host-side change:"}
	js := []string{`"kind"`, `"file"`, `"file_sha256"`, `"outside_fn"`, `"outside"`, `"patch_refused"`, `"point"`, `"parity"`, `"host_note"`, `"hand_written"`, `"not_bitwise"`, `"tune"`, `"scope"`, `"attempts"`}
	reports := goldenReports(t)
	for name, r := range reports {
		used := name == "hand_tune_tolerance.txtar"
		for _, s := range md {
			if strings.Contains(r[0], s) != used {
				t.Errorf("%s: report.md has %q: %v", name, s, !used)
			}
		}
		keys := jsonKeys(t, r[1])
		for _, s := range js {
			if keys[strings.Trim(s, `"`)] != used {
				t.Errorf("%s: report.json has %s: %v", name, s, !used)
			}
		}
		if !strings.Contains(r[0], "- parity: ") {
			t.Errorf("%s: the plan does not state its parity rule", name)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(reports["hand_tune_tolerance.txtar"][1]), &doc); err != nil {
		t.Fatal(err)
	}
	if p := doc["plan"].(map[string]any)["parity"]; p != "ulp=4" {
		t.Errorf("plan parity %v", p)
	}
}

// TestNotBitwiseLine: a tolerance, the plan's or a variant's judgement,
// puts a "not bitwise" line above the confirmation; bitwise puts none.
func TestNotBitwiseLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(in *Input)
		want string // "" no line
	}{
		{"bitwise", func(in *Input) {}, ""},
		{"plan says bitwise", func(in *Input) { in.Plan.Parity = "bitwise" }, ""},
		{"tolerance, all bitwise", func(in *Input) { in.Plan.Parity = "rel=1e-6" }, "every variant's outputs were bitwise identical"},
		{"tolerance used", func(in *Input) {
			in.Plan.Parity = "ulp=4"
			in.Variants[0].Parity = "not bitwise: ulp≤4, max 1 ulp in out at case quick"
		}, "1 variant differs from the baseline within it: `unroll-pragma.reduce.0=count4-1a2b3c4d` (not bitwise: ulp≤4, max 1 ulp"},
		{"a case judged", func(in *Input) { in.Variants[0].Cases[0].Parity = "not bitwise: max 1 ulp in out" }, "1 variant differs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := goldenInput(t, "cpu_emulator.txtar")
			tt.edit(in)
			b, err := Markdown(in, nil)
			if err != nil {
				t.Fatal(err)
			}
			md := string(b)
			top, _, _ := strings.Cut(md, "## Confirmation")
			if tt.want == "" {
				if strings.Contains(md, "ot bitwise") {
					t.Errorf("a bitwise report says not bitwise:\n%s", md)
				}
				return
			}
			if !strings.Contains(top, "> **Not bitwise:** ") || !strings.Contains(top, tt.want) {
				t.Errorf("top of the report lacks the not-bitwise line %q:\n%s", tt.want, top)
			}
			if !strings.Contains(md, "| parity |") {
				t.Errorf("the confirmation table has no parity column")
			}
		})
	}
}

// jsonKeys lists the keys of report.json's plan, summary, variants, their
// cases and contamination notes.
func jsonKeys(t *testing.T, js string) map[string]bool {
	t.Helper()
	var doc struct {
		Plan          map[string]any   `json:"plan"`
		Summary       map[string]any   `json:"summary"`
		Variants      []map[string]any `json:"variants"`
		Contamination []map[string]any `json:"contamination"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	objs := append([]map[string]any{doc.Plan, doc.Summary}, doc.Contamination...)
	for _, v := range doc.Variants {
		objs = append(objs, v)
		cs, _ := v["cases"].([]any)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				objs = append(objs, m)
			}
		}
	}
	for _, o := range objs {
		for k := range o {
			keys[k] = true
		}
	}
	return keys
}

func TestGainText(t *testing.T) {
	for _, tt := range []struct {
		ratio float64
		want  string
	}{{0.9579, "+4.21% faster"}, {1.0038, "-0.38% slower"}, {1, "+0.00%"}, {2.352, "-135.20% slower"}} {
		if got := GainText(tt.ratio); got != tt.want {
			t.Errorf("GainText(%v) = %q, want %q", tt.ratio, got, tt.want)
		}
	}
}
