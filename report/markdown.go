package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// Markdown returns report.md for in; plots are the files Render writes
// beside it (relative paths), listed at the end.
func Markdown(in *Input, plots []Plot) ([]byte, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	title := in.Title
	if title == "" {
		title = in.Plan.Kernel
	}
	w("# metalab sweep: %s\n\n", oneLine(title))
	if in.Provenance.Clock != "" {
		w("> timings: %s\n\n", oneLine(in.Provenance.Clock))
	}
	w("%s\n\n", decisionLine(in))
	if line := notBitwiseLine(in); line != "" {
		w("%s\n\n", line)
	}
	if in.Verification != "" {
		w("> checks: %s\n\n", oneLine(in.Verification))
	}
	var violated []string
	for _, v := range in.Variants {
		if v.ProofViolated {
			violated = append(violated, code(v.Name))
		}
	}
	if len(violated) > 0 {
		what, are := fmt.Sprintf("%d variants", len(violated)), "are"
		if len(violated) == 1 {
			what, are = "1 variant", "is"
		}
		w("**Proof violated: %s** (%s) %s made only of operators that claim to keep outputs bitwise identical, and failed the checks. "+
			"This is a bug in metalab, not in the kernel: please report it with the variants' logs and sources.\n\n", what, strings.Join(violated, ", "), are)
	}

	// Confirmation: every timed variant at every case it was timed at.
	var timed []Variant
	for _, v := range in.Variants {
		for _, c := range v.Cases {
			if c.Timing != nil {
				timed = append(timed, v)
				break
			}
		}
	}
	w("## Confirmation\n\n")
	if in.Plan.Rule != "" {
		w("rule: %s\n\n", oneLine(in.Plan.Rule))
	}
	if len(timed) == 0 {
		w("%s\n\n", notConfirmedLine(in))
	} else {
		var medians []float64
		for _, v := range timed {
			for _, c := range v.Cases {
				if c.Timing != nil {
					medians = append(medians, c.Timing.MedianA, c.Timing.MedianB)
				}
			}
		}
		u := pickUnit(medians)
		points := anyVariant(timed, func(v *Variant) bool { return v.Point != "" })
		t := table{"variant", "case"}
		if points {
			t = append(t, "point")
		}
		t = append(t, "before median "+u.name, "after median "+u.name, "gain", ciHeader(in.Plan.CILevel), "pairs", parityHeader(in), "threadgroup bytes before → after", "verdict")
		t.header(w)
		for _, v := range timed {
			for _, c := range v.Cases {
				tm := c.Timing
				if tm == nil {
					continue
				}
				row := []string{code(v.Name), cell(c.Case)}
				if points {
					row = append(row, cell(dash(v.Point)))
				}
				row = append(row, u.format(tm.MedianA), u.format(tm.MedianB), gain(tm), ci(tm.CI), fmt.Sprint(tm.Pairs),
					cell(parityCell(in, &v, c.Bitwise, c.Parity)), tgBytes(in.BaselineTGBytes, v.TGBytes), cell(dash(v.Verdict)))
				t.row(w, row)
			}
		}
		w("\n%s", gainNote)
		if in.Plan.CILevel > 0 {
			w("; CI: the %s interval of the gain", pct(in.Plan.CILevel))
		}
		w(". before is the baseline (A), after the variant (B), timed in alternating pairs.\n\n")
		w("### Verdicts\n\n")
		for _, v := range timed {
			w("- %s: **%s**", code(v.Name), dash(v.Verdict))
			var about []string
			if v.Label != "" {
				about = append(about, oneLine(v.Label))
			}
			if v.Point != "" {
				about = append(about, "at "+oneLine(v.Point))
			}
			if v.HandWritten() && (v.File == "" || !strings.Contains(v.Label, v.File)) {
				about = append(about, origin(&v))
			}
			if len(about) > 0 {
				w(" (%s)", strings.Join(about, "; "))
			}
			if len(v.Reasons) > 0 {
				var rs []string
				for _, r := range v.Reasons {
					rs = append(rs, oneLine(attemptsFixed(in, v.Name, r)))
				}
				w(": %s", strings.Join(rs, "; "))
			}
			if v.Parity != "" {
				w(". %s", oneLine(v.Parity))
			}
			if v.OutsideFn && !strings.Contains(v.Label, "outside --fn") {
				w(". %s", outsideText(&v))
			}
			if v.Patch != "" {
				w(". patch: %s", code(v.Patch))
			}
			if v.PatchRefused != "" {
				w(". patch refused: %s", oneLine(v.PatchRefused))
			}
			if v.HostNote != "" {
				w(". host-side change: %s", oneLine(v.HostNote))
			}
			w("\n")
		}
		w("\n")
	}

	if a := in.Ablation; a != nil {
		w("## Exploratory ablation (%s)\n\n", oneLine(a.Case))
		if len(a.Rows) == 0 {
			w("No variant was timed.\n\n")
		} else {
			var medians []float64
			for _, r := range a.Rows {
				medians = append(medians, r.Timing.MedianA, r.Timing.MedianB)
			}
			u := pickUnit(medians)
			byName := map[string]*Variant{}
			for i := range in.Variants {
				byName[in.Variants[i].Name] = &in.Variants[i]
			}
			point := func(r AblationRow) string {
				if r.Point != "" {
					return r.Point
				}
				if v := byName[r.Variant]; v != nil {
					return v.Point
				}
				return ""
			}
			points := false
			for _, r := range a.Rows {
				points = points || point(r) != ""
			}
			t := table{"variant"}
			if points {
				t = append(t, "point")
			}
			t = append(t, "before median "+u.name, "after median "+u.name, "gain", "pairs", parityHeader(in))
			t.header(w)
			for _, r := range a.Rows {
				name := code(r.Variant)
				if r.Label != "" {
					name = cell(r.Label) + " " + name
				}
				row := []string{name}
				if points {
					row = append(row, cell(dash(point(r))))
				}
				v := byName[r.Variant]
				if v == nil {
					v = &Variant{}
				}
				row = append(row, u.format(r.Timing.MedianA), u.format(r.Timing.MedianB), gain(&r.Timing), fmt.Sprint(r.Timing.Pairs), cell(parityCell(in, v, r.Bitwise, "")))
				t.row(w, row)
			}
			w("\n%s.\n", gainNote)
			w("\nExploratory timings choose what to confirm; they are not the decision.\n\n")
		}
	}

	w("## Checks\n\n")
	if len(in.Variants) == 0 {
		w("No variant was built.\n\n")
	} else {
		all := make([]Variant, len(in.Variants))
		copy(all, in.Variants)
		hand := anyVariant(all, (*Variant).HandWritten)
		points := anyVariant(all, func(v *Variant) bool { return v.Point != "" })
		outside := anyVariant(all, func(v *Variant) bool { return v.OutsideFn })
		tol := tolerance(in)
		t := table{"variant"}
		if hand {
			t = append(t, "origin")
		}
		t = append(t, "sites")
		if points {
			t = append(t, "point")
		}
		if outside {
			t = append(t, "outside --fn")
		}
		t = append(t, "compile", "verification", "confirmation", "after timing", "held-out cases", "verdict of the checks")
		if tol {
			t = append(t, "parity")
		}
		t = append(t, "stopped at", "threadgroup bytes", "note")
		t.header(w)
		for i := range all {
			v := &all[i]
			row := []string{code(v.Name)}
			if hand {
				o := "generated"
				if v.HandWritten() {
					o = origin(v)
				}
				row = append(row, cell(o))
			}
			row = append(row, cell(dash(strings.Join(v.Refs, ", "))))
			if points {
				row = append(row, cell(dash(v.Point)))
			}
			if outside {
				o := "no"
				if v.OutsideFn {
					o = "yes"
					if v.Outside != "" {
						o += ": " + v.Outside
					}
				}
				row = append(row, cell(o))
			}
			row = append(row, cell(dash(v.Compile)), cell(dash(v.Verification)), cell(dash(v.Confirmation)), cell(dash(v.AfterTiming)),
				fmt.Sprint(v.HeldOut), cell(dash(v.Check)))
			if tol {
				p := "—"
				switch {
				case v.Parity != "":
					p = v.Parity
				case v.Check == "pass" || v.Check == "fail-after-timing":
					p = "bitwise"
				}
				row = append(row, cell(p))
			}
			row = append(row, cell(dash(v.Stopped)), tgBytes(in.BaselineTGBytes, v.TGBytes), cell(v.CheckMessage))
			t.row(w, row)
		}
		w("\nverification: %s, races, uninitialised reads and bounds in the checking mode on the verification backend; "+
			"confirmation: %s of the timed build on the timing backend at every timed case; "+
			"after timing: the outputs of each measurement's last timed sample against the baseline's; held-out cases: the cases drawn from the spec's domains that the verification also ran. A variant is timed only when both parts pass.", parityPhrase(in), parityPhrase(in))
		if outside {
			w(" outside --fn: the variant changes code outside the owned functions (%s); its patch needs --scope file.", oneLine(dash(strings.Join(in.Plan.Functions, ", "))))
		}
		w("\n\n")
		if len(in.BaselineFindings) > 0 {
			w("Baseline findings (the baseline's own; they do not stop a variant that keeps them):\n\n")
			for _, f := range in.BaselineFindings {
				w("- %s\n", oneLine(f))
			}
			w("\n")
		}
		if in.Plan.TGLimit > 0 {
			w("threadgroup memory limit: %d bytes.\n\n", in.Plan.TGLimit)
		}
	}

	w("## Controls\n\n")
	if len(in.Controls) == 0 {
		w("No control was timed: the timings have no noise floor to compare with.\n\n")
	} else {
		var medians []float64
		for _, c := range in.Controls {
			medians = append(medians, c.MedianA, c.MedianB)
		}
		u := pickUnit(medians)
		w("The baseline timed against itself, in the same alternating pairs.\n\n")
		w("| case | phase | before median %s | after median %s | ratio | spread | pairs |\n", u.name, u.name)
		w("|---|---|---|---|---|---|---|\n")
		for _, c := range in.Controls {
			ratio := fmt.Sprintf("%.4f", c.Ratio)
			if c.Contaminated {
				ratio += ", contaminated"
			}
			w("| %s | %s | %s | %s | %s | %.4f–%.4f | %d |\n", cell(c.Case), cell(dash(c.Phase)), u.format(c.MedianA), u.format(c.MedianB), ratio, c.RatioMin, c.RatioMax, c.Pairs)
		}
		w("\nspread: the smallest and largest per-pair ratio.\n\n")
	}

	w("## Contamination\n\n")
	if len(in.Contamination) == 0 {
		w("No measurement was flagged.\n\n")
	} else {
		for _, n := range in.Contamination {
			var at []string
			if n.Variant != "" {
				at = append(at, code(n.Variant))
			} else {
				at = append(at, "control")
			}
			if n.Case != "" {
				at = append(at, "at "+oneLine(n.Case))
			}
			phase, text := noteParts(n)
			if n.Attempts == 0 {
				phase, text = n.Phase, n.Text // the text names its phase and counts
			}
			if phase != "" {
				at = append(at, "("+oneLine(phase)+")")
			}
			if n.Attempts > 0 {
				w("- %s, %s: %s\n", strings.Join(at, " "), attemptsText(n.ContaminatedAttempts, n.Attempts), oneLine(text))
				continue
			}
			w("- %s: %s\n", strings.Join(at, " "), oneLine(n.Text))
		}
		w("\n")
	}

	p := in.Plan
	w("## Plan\n\n")
	w("- rule: %s\n", oneLine(dash(p.Rule)))
	w("- parity: %s\n", parityName(in))
	if p.Strategy != "" {
		w("- strategy: %s\n", oneLine(p.Strategy))
	}
	if p.Tune != "" {
		w("- tunable parameters: %s\n", oneLine(p.Tune))
	}
	if p.Scope != "" {
		w("- patch scope: %s\n", oneLine(p.Scope))
	}
	w("- kernel: %s", code(dash(p.Kernel)))
	if len(p.Functions) > 0 {
		w(", functions %s", oneLine(strings.Join(p.Functions, ", ")))
	}
	w("\n")
	w("- cases: %s\n", oneLine(dash(strings.Join(p.Cases, ", "))))
	if p.ExploreCase != "" {
		w("- explore case: %s\n", oneLine(p.ExploreCase))
	}
	w("- pairs: %d per measurement, alternating A/B\n", p.Pairs)
	if p.CILevel > 0 {
		w("- interval: %s\n", pct(p.CILevel))
	}
	w("- baseline sha256: %s\n", code(dash(p.Baseline)))
	if p.TGLimit > 0 {
		w("- threadgroup memory limit: %d bytes\n", p.TGLimit)
	}
	w("- plan hash: %s\n\n", code(dash(p.Hash)))

	pv := in.Provenance
	w("## Provenance\n\n")
	w("- metalab: %s\n", oneLine(dash(pv.Version)))
	w("- backend: %s\n", oneLine(dash(pv.Backend)))
	w("- device: %s\n", oneLine(dash(pv.Device)))
	w("- compiler: %s\n", oneLine(dash(pv.Compiler)))
	w("- clock: %s\n", oneLine(dash(pv.Clock)))
	if pv.Store != "" {
		w("- results store: %s\n", code(pv.Store))
	}

	if len(plots) > 0 {
		w("\n## Plots\n\n")
		for _, pl := range plots {
			w("- [%s](%s)\n", linkText(pl.Title), pl.File)
		}
	}
	return b.Bytes(), nil
}

// decisionLine says in one sentence what the sweep came to.
func decisionLine(in *Input) string {
	var retained []string
	count := map[string]int{}
	failed, violated, after, open := 0, 0, 0, 0
	for _, v := range in.Variants {
		switch {
		case v.ProofViolated:
			violated++
		case v.Check == "fail-after-timing" && v.Verdict == "":
			after++
		case v.Verdict != "":
			count[v.Verdict]++
			if v.Verdict == "retain" {
				s := code(v.Name)
				var about []string
				if v.Point != "" {
					about = append(about, "at "+oneLine(v.Point))
				}
				if v.Parity != "" {
					about = append(about, "not bitwise")
				}
				if v.Patch != "" {
					about = append(about, "patch "+code(v.Patch))
				}
				if v.PatchRefused != "" {
					about = append(about, "patch refused")
				}
				if v.HostNote != "" {
					about = append(about, "host-side change: "+oneLine(v.HostNote))
				}
				if len(about) > 0 {
					s += " (" + strings.Join(about, "; ") + ")"
				}
				retained = append(retained, s)
			}
		case v.Compile != "ok" || v.Check != "pass":
			failed++
		default:
			open++
		}
	}
	s := fmt.Sprintf("**Decision:** %d of %d variants retained", len(retained), len(in.Variants))
	if len(retained) > 0 {
		s += ": " + strings.Join(retained, ", ")
	}
	var rest []string
	for _, k := range []string{"reject", "inconclusive", "pending"} {
		if count[k] > 0 {
			rest = append(rest, fmt.Sprintf("%d %s", count[k], map[string]string{"reject": "rejected", "inconclusive": "inconclusive", "pending": "not decided"}[k]))
		}
	}
	if failed > 0 {
		rest = append(rest, fmt.Sprintf("%d failed to compile or check", failed))
	}
	if after > 0 {
		rest = append(rest, fmt.Sprintf("%d failed after timing", after))
	}
	if violated > 0 {
		rest = append(rest, fmt.Sprintf("%d proof violated (a metalab bug)", violated))
	}
	if open > 0 {
		rest = append(rest, fmt.Sprintf("%d passed the checks and were not confirmed", open))
	}
	if !in.Verified && in.Verification != "" {
		rest = append(rest, "not verified")
	}
	if len(rest) > 0 {
		s += "; " + strings.Join(rest, ", ")
	}
	return s + "."
}

// A unit is how a table shows durations.
type unit struct {
	name string
	ns   float64
}

// pickUnit chooses the largest unit in which the smallest positive
// duration is at least 1, so a table's numbers are comparable at a glance.
func pickUnit(ns []float64) unit {
	units := []unit{{"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}}
	min := math.Inf(1)
	for _, v := range ns {
		if v > 0 && v < min {
			min = v
		}
	}
	if math.IsInf(min, 1) {
		return units[1]
	}
	for _, u := range units {
		if min >= u.ns {
			return u
		}
	}
	return units[len(units)-1]
}

func (u unit) format(ns float64) string { return fmt.Sprintf("%.3f", ns/u.ns) }

// gainNote explains the gain columns. The gain is the rule's word: one
// convention, positive is faster, in every table and reason.
const gainNote = "gain: one minus the median of the per-pair ratios after/before, as the rule's median gain (positive is faster, negative slower)"

// gain is a timing's median gain with its direction in words: "+4.21%
// faster", "-0.38% slower".
func gain(t *Timing) string {
	s := gainPct(t.Ratio)
	switch g := gainOf(t.Ratio); {
	case g > 0:
		s += " faster"
	case g < 0:
		s += " slower"
	}
	if t.Contaminated {
		s += ", contaminated"
	}
	return s
}

// gainOf is 1-ratio in hundredths of a percent, rounded as shown.
func gainOf(ratio float64) float64 {
	return math.Round((1-ratio)*10000) / 100
}

func gainPct(ratio float64) string {
	v := gainOf(ratio)
	if v == 0 {
		v = 0 // no "-0.00%"
	}
	return fmt.Sprintf("%+.2f%%", v)
}

// ci is the interval of the gain: an interval [lo, hi] of the ratio is
// [1-hi, 1-lo] of the gain.
func ci(iv *Interval) string {
	if iv == nil {
		return "—"
	}
	return fmt.Sprintf("[%s, %s]", gainPct(iv.High), gainPct(iv.Low))
}

func ciHeader(level float64) string {
	if level <= 0 {
		return "CI"
	}
	return "CI " + pct(level)
}

// pct formats a level such as 0.95 as "95%".
func pct(level float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", level*100), "0"), ".") + "%"
}

func tgBytes(before, after int64) string {
	f := func(n int64) string {
		if n < 0 {
			return "?"
		}
		return fmt.Sprint(n)
	}
	return f(before) + " → " + f(after)
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// oneLine folds white space, so free text cannot break a list or table.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell makes s safe in a table cell.
func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

// code shows s as code, in a table cell or a list.
func code(s string) string {
	s = oneLine(s)
	if s == "" || s == "—" {
		return dash("")
	}
	if strings.Contains(s, "`") {
		return cell(s)
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

func linkText(s string) string {
	r := strings.NewReplacer("[", `\[`, "]", `\]`)
	return r.Replace(oneLine(s))
}
