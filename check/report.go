package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r as a table for people, followed by the details of
// every failure.
func (r *Report) WriteText(w io.Writer) error {
	race := ", checking mode on"
	if !r.Detect {
		race = ", checking mode off"
	}
	if r.Strict {
		race += " (strict)"
	}
	if r.Race {
		race += ", race probe: " + strings.Join(r.Orders, " ")
	}
	tolerant := r.Parity != "" && r.Parity != "bitwise"
	if tolerant {
		race += ", parity " + r.Parity + " (a tolerance: variants need not be bitwise)"
	}
	sets := "sets " + strings.Join(r.Sets, ", ")
	if r.DefaultSets {
		sets += " (the spec's default"
		if len(r.OtherSets) > 0 {
			sets += "; not run: " + strings.Join(r.OtherSets, ", ") + "; choose with --cases"
		}
		sets += ")"
	}
	fmt.Fprintf(w, "spec %s: %d cases of %s on %s, tg limit %d bytes%s\n", r.Spec, r.Cases, sets, r.Backend, r.TGLimit, race)
	fmt.Fprintf(w, "%s\n", r.partsText())
	fmt.Fprintf(w, "baseline %s sha256 %s\n", r.Source, short(r.SourceSHA256))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "VARIANT\tSTATUS\tTGMEM\tTGMEM (SOURCE)\tCASES\tSHA256\tTIME\tVERIFICATION\tCONFIRMATION"
	if tolerant {
		head += "\tPARITY"
	}
	fmt.Fprintln(tw, head)
	all := append([]*Result{r.Control}, r.Variants...)
	for _, v := range all {
		if v == nil {
			continue
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%.2fs\t%s\t%s", v.Name, v.Status, tgText(v.TGMem, false, v == r.Control), tgText(v.TGMem, true, v == r.Control),
			casesText(v), short(v.SHA256), v.Seconds, partText(v.Verification), partText(v.Confirmation))
		if tolerant {
			row += "\t" + parityText(v, v == r.Control)
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.HeldOut > 0 {
		fmt.Fprintf(w, "\nheld-out cases: up to %d per variant, drawn from the spec's domains (seed %s)\n", r.HeldOut, r.HeldOutSeed)
		for _, v := range r.Variants {
			if h := v.HeldOut; h != nil {
				fmt.Fprintf(w, "  %s: %d judged, %d skipped", v.Name, h.Judged, h.Skipped)
				var names []string
				for _, d := range h.Cases {
					names = append(names, d.Case)
				}
				fmt.Fprintf(w, ": %s\n", strings.Join(names, " "))
			}
		}
	}
	if c := r.Control; c != nil && len(c.BaselineFindings) > 0 {
		fmt.Fprintf(w, "\nbaseline findings: %d, the baseline's own; they fail neither the control nor a variant that keeps them (see docs/checking.md)\n", len(c.BaselineFindings))
		for i, f := range c.BaselineFindings {
			if i == 10 {
				fmt.Fprintf(w, "  and %d more (see --json)\n", len(c.BaselineFindings)-i)
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", f.Kind, f.Msg)
		}
	}
	for _, v := range all {
		if v == nil {
			continue
		}
		if v.Status == Pass {
			if len(v.Warnings) > 0 {
				fmt.Fprintf(w, "\n%s: pass with %d warning(s)\n", v.Name, len(v.Warnings))
				for _, msg := range v.Warnings {
					fmt.Fprintf(w, "  warning: %s\n", msg)
				}
			}
			continue
		}
		fmt.Fprintf(w, "\n%s: %s", v.Name, v.Status)
		if v.Msg != "" {
			fmt.Fprintf(w, ": %s", v.Msg)
		}
		fmt.Fprintln(w)
		if s := stoppedText(v); s != "" {
			fmt.Fprintf(w, "  stopped at %s\n", s)
		}
		if v.Mismatch != nil {
			fmt.Fprintf(w, "  %s\n", v.Mismatch)
		}
		for _, c := range v.Cases {
			switch {
			case c.Status == Pass || (c.Mismatch != nil && c.Mismatch == v.Mismatch):
			case c.Mismatch != nil:
				fmt.Fprintf(w, "  %s\n", c.Mismatch)
			case c.Msg != "" && c.Msg != v.Msg:
				fmt.Fprintf(w, "  case %s: %s: %s\n", c.Case, c.Status, c.Msg)
			default:
				fmt.Fprintf(w, "  case %s: %s\n", c.Case, c.Status)
			}
		}
		// Other failures the checking mode saw, once each.
		shown := map[string]bool{v.Msg: true}
		extra := 0
		for _, c := range v.Cases {
			for _, f := range c.Findings {
				if f.Warning || f.Baseline || shown[f.Msg] || strings.Contains(v.Msg, f.Msg) {
					continue
				}
				shown[f.Msg] = true
				if extra++; extra <= 5 {
					fmt.Fprintf(w, "  also: %s\n", f.Msg)
				}
			}
		}
		if extra > 5 {
			fmt.Fprintf(w, "  and %d more findings (see --json)\n", extra-5)
		}
		for _, msg := range v.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", msg)
		}
		if h := v.HeldOut; h != nil && h.Shrunk != nil {
			fmt.Fprintf(w, "  held-out case failed; smallest failing case (%d shrink runs): %s\n", h.ShrinkRuns, h.Shrunk.Case)
		}
		if v.Replay != "" {
			fmt.Fprintf(w, "  replay: %s\n", v.Replay)
		}
		if v.Dump != "" {
			fmt.Fprintf(w, "  dump: %s (inputs, baseline and variant outputs as .npy)\n", v.Dump)
		}
		if v.Log != "" {
			fmt.Fprintf(w, "  log:\n%s", indent(tail(v.Log, 20), "    "))
		}
	}
	return nil
}

// parityText is a row's PARITY column under a tolerance rule.
func parityText(v *Result, control bool) string {
	switch {
	case control:
		return "reference"
	case v.Tolerance == nil:
		return "not compared"
	case v.Status == FailParity:
		return "outside " + v.Tolerance.Rule
	}
	return v.Tolerance.Text()
}

// partsText says where the two parts of the verdict run.
func (r *Report) partsText() string {
	confirm := fmt.Sprintf("confirmed on %s in the plain build (the one that is timed) at %d cases", r.Backend, r.Cases)
	if !r.Verified {
		return "not verified; " + confirm
	}
	return fmt.Sprintf("verified on %s in the checking mode at %d cases of sets %s; %s", r.VerifyBackend, r.VerifyCases, strings.Join(r.VerifySets, ", "), confirm)
}

// partText is a part's column in the table.
func partText(p Part) string {
	switch p.Status {
	case NotVerified:
		return "not verified"
	case "":
		return "-"
	}
	return string(p.Status)
}

// stoppedText says where a failed result stopped, or "".
func stoppedText(v *Result) string {
	switch v.Stopped {
	case PartVerification:
		return fmt.Sprintf("verification (%s, checking build)", v.Verification.Backend)
	case PartConfirmation:
		return fmt.Sprintf("confirmation (%s, plain build)", v.Confirmation.Backend)
	case PartBuild:
		return "the build, before verification and confirmation"
	}
	return ""
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

// tgText formats threadgroup memory for the table: before→after for one
// stage; for several, the stages whose memory changed, or every stage's
// size for the control.
func tgText(ts []TGMem, source, control bool) string {
	if len(ts) == 0 {
		return "-"
	}
	var parts []string
	most := -1
	for _, t := range ts {
		b, a := t.Before, t.After
		if source {
			b, a = t.SourceBefore, t.SourceAfter
		}
		most = max(most, a)
		switch {
		case len(ts) == 1:
			parts = append(parts, bytesText(b)+"→"+bytesText(a))
		case control:
			parts = append(parts, t.Entry+" "+bytesText(a))
		case a != b:
			parts = append(parts, t.Entry+" "+bytesText(b)+"→"+bytesText(a))
		}
	}
	if len(parts) == 0 {
		return "unchanged, max " + bytesText(most)
	}
	return strings.Join(parts, ", ")
}

func bytesText(n int) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

func casesText(v *Result) string {
	pass := 0
	for _, c := range v.Cases {
		if c.Status == Pass {
			pass++
		}
	}
	if len(v.Cases) == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", pass, len(v.Cases))
}

func tail(s string, lines int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = append([]string{fmt.Sprintf("... %d lines omitted", len(ls)-lines)}, ls[len(ls)-lines:]...)
	}
	return strings.Join(ls, "\n") + "\n"
}

func indent(s, pre string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(pre + l)
		}
	}
	return b.String()
}
