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
		w("No variant was timed.\n\n")
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
		w("| variant | case | before median %s | after median %s | change | %s | pairs | bitwise | threadgroup bytes before → after | verdict |\n", u.name, u.name, ciHeader(in.Plan.CILevel))
		w("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, v := range timed {
			for _, c := range v.Cases {
				t := c.Timing
				if t == nil {
					continue
				}
				w("| %s | %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", code(v.Name), cell(c.Case), u.format(t.MedianA), u.format(t.MedianB),
					change(t), ci(t.CI), t.Pairs, cell(bitwise(in, c.Bitwise)), tgBytes(in.BaselineTGBytes, v.TGBytes), cell(dash(v.Verdict)))
			}
		}
		w("\nchange: the median of the per-pair ratios after/before, minus one (negative is faster)")
		if in.Plan.CILevel > 0 {
			w("; CI: its %s interval", pct(in.Plan.CILevel))
		}
		w(". before is the baseline (A), after the variant (B), timed in alternating pairs.\n\n")
		w("### Verdicts\n\n")
		for _, v := range timed {
			w("- %s: **%s**", code(v.Name), dash(v.Verdict))
			if v.Label != "" {
				w(" (%s)", oneLine(v.Label))
			}
			if len(v.Reasons) > 0 {
				var rs []string
				for _, r := range v.Reasons {
					rs = append(rs, oneLine(r))
				}
				w(": %s", strings.Join(rs, "; "))
			}
			if v.Patch != "" {
				w(". patch: %s", code(v.Patch))
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
			w("| variant | before median %s | after median %s | change | pairs | bitwise |\n", u.name, u.name)
			w("|---|---|---|---|---|---|\n")
			for _, r := range a.Rows {
				name := code(r.Variant)
				if r.Label != "" {
					name = cell(r.Label) + " " + name
				}
				w("| %s | %s | %s | %s | %d | %s |\n", name, u.format(r.Timing.MedianA), u.format(r.Timing.MedianB), change(&r.Timing), r.Timing.Pairs, cell(bitwise(in, r.Bitwise)))
			}
			w("\nExploratory timings choose what to confirm; they are not the decision.\n\n")
		}
	}

	w("## Checks\n\n")
	if len(in.Variants) == 0 {
		w("No variant was built.\n\n")
	} else {
		w("| variant | sites | compile | verification | confirmation | after timing | held-out cases | verdict of the checks | stopped at | threadgroup bytes | note |\n")
		w("|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, v := range in.Variants {
			w("| %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", code(v.Name), cell(strings.Join(v.Refs, ", ")), cell(dash(v.Compile)),
				cell(dash(v.Verification)), cell(dash(v.Confirmation)), cell(dash(v.AfterTiming)), v.HeldOut, cell(dash(v.Check)), cell(dash(v.Stopped)),
				tgBytes(in.BaselineTGBytes, v.TGBytes), cell(v.CheckMessage))
		}
		w("\nverification: bitwise parity, races, uninitialised reads and bounds in the checking mode on the verification backend; " +
			"confirmation: bitwise parity of the timed build on the timing backend at every timed case; " +
			"after timing: the outputs of each measurement's last timed sample against the baseline's; held-out cases: the cases drawn from the spec's domains that the verification also ran. A variant is timed only when both parts pass.\n\n")
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
			w("- %s: %s\n", strings.Join(at, " "), oneLine(n.Text))
		}
		w("\n")
	}

	p := in.Plan
	w("## Plan\n\n")
	w("- rule: %s\n", oneLine(dash(p.Rule)))
	if p.Strategy != "" {
		w("- strategy: %s\n", oneLine(p.Strategy))
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
	failed, violated, after := 0, 0, 0
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
				if v.Patch != "" {
					s += " (patch " + code(v.Patch) + ")"
				}
				retained = append(retained, s)
			}
		case v.Compile != "ok" || v.Check != "pass":
			failed++
		}
	}
	s := fmt.Sprintf("**Decision:** %d of %d variants retained", len(retained), len(in.Variants))
	if len(retained) > 0 {
		s += ": " + strings.Join(retained, ", ")
	}
	var rest []string
	for _, k := range []string{"reject", "inconclusive"} {
		if count[k] > 0 {
			rest = append(rest, fmt.Sprintf("%d %s", count[k], map[string]string{"reject": "rejected", "inconclusive": "inconclusive"}[k]))
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
	if !in.Verified && in.Verification != "" {
		rest = append(rest, "not verified")
	}
	if len(rest) > 0 {
		s += "; " + strings.Join(rest, ", ")
	}
	return s + "."
}

// bitwise is a timed row's bitwise status, saying "not verified" when
// the variants were confirmed only.
func bitwise(in *Input, status string) string {
	if !in.Verified && in.Verification != "" && status != "" {
		return status + ", not verified"
	}
	return dash(status)
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

func change(t *Timing) string {
	s := signedPct(t.Ratio)
	if t.Contaminated {
		s += ", contaminated"
	}
	return s
}

func signedPct(ratio float64) string {
	v := (ratio - 1) * 100
	if math.Abs(v) < 0.005 {
		v = 0 // no "-0.00%"
	}
	return fmt.Sprintf("%+.2f%%", v)
}

func ci(iv *Interval) string {
	if iv == nil {
		return "—"
	}
	return fmt.Sprintf("[%s, %s]", signedPct(iv.Low), signedPct(iv.High))
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
