package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A table is a markdown table's header; its columns vary with what the
// input uses, so a column that would be empty on every row is left out.
type table []string

func (t table) header(w func(string, ...any)) {
	w("| %s |\n", strings.Join(t, " | "))
	w("|%s\n", strings.Repeat("---|", len(t)))
}

func (t table) row(w func(string, ...any), cells []string) {
	w("| %s |\n", strings.Join(cells, " | "))
}

func anyVariant(vs []Variant, f func(*Variant) bool) bool {
	for i := range vs {
		if f(&vs[i]) {
			return true
		}
	}
	return false
}

// parityName is the rule outputs were compared by: "bitwise" by default.
func parityName(in *Input) string {
	if p := oneLine(in.Plan.Parity); p != "" && p != "bitwise" {
		return "tolerance " + p + ", not bitwise"
	}
	return "bitwise"
}

// parityPhrase is how outputs were compared, for the checks' legend.
func parityPhrase(in *Input) string {
	if p := oneLine(in.Plan.Parity); p != "" && p != "bitwise" {
		return "parity within the tolerance " + p + " (not bitwise)"
	}
	return "bitwise parity"
}

// tolerance reports whether any output was compared under a tolerance:
// the plan's parity, or a variant or case judged by one.
func tolerance(in *Input) bool {
	if parityName(in) != "bitwise" {
		return true
	}
	for _, v := range in.Variants {
		if v.Parity != "" {
			return true
		}
		for _, c := range v.Cases {
			if c.Parity != "" {
				return true
			}
		}
	}
	return false
}

// notBitwise lists the variants whose outputs were judged under a
// tolerance and were not bitwise identical.
func notBitwise(in *Input) []*Variant {
	var out []*Variant
	for i := range in.Variants {
		v := &in.Variants[i]
		judged := v.Parity != ""
		for _, c := range v.Cases {
			judged = judged || c.Parity != ""
		}
		if judged {
			out = append(out, v)
		}
	}
	return out
}

// notBitwiseLine is the report's top line when a tolerance was used, ""
// otherwise: which variants differ from the baseline within it.
func notBitwiseLine(in *Input) string {
	if !tolerance(in) {
		return ""
	}
	rule := "a tolerance"
	if p := oneLine(in.Plan.Parity); p != "" && p != "bitwise" {
		rule = "the tolerance " + code(p)
	}
	vs := notBitwise(in)
	if len(vs) == 0 {
		return fmt.Sprintf("> **Not bitwise:** outputs were compared under %s, not bitwise; every variant's outputs were bitwise identical to the baseline's all the same.", rule)
	}
	var names []string
	for _, v := range vs {
		s := code(v.Name)
		if v.Parity != "" {
			s += " (" + oneLine(v.Parity) + ")"
		}
		names = append(names, s)
	}
	what, differ := fmt.Sprintf("%d variants", len(vs)), "differ"
	if len(vs) == 1 {
		what, differ = "1 variant", "differs"
	}
	return fmt.Sprintf("> **Not bitwise:** outputs were compared under %s, not bitwise; %s %s from the baseline within it: %s. Bitwise is the default rule; these results hold only as far as the tolerance does.",
		rule, what, differ, strings.Join(names, ", "))
}

func parityHeader(in *Input) string {
	if tolerance(in) {
		return "parity"
	}
	return "bitwise"
}

// parityCell is a row's check status, saying "not verified" when the
// variants were confirmed only, and "not bitwise" with by how much when
// judged under a tolerance (the case's judgement, else the variant's).
func parityCell(in *Input, v *Variant, status, caseParity string) string {
	if status == "" {
		return dash("")
	}
	s := status
	if !in.Verified && in.Verification != "" {
		s += ", not verified"
	}
	switch {
	case caseParity != "":
		s += ", " + oneLine(caseParity)
	case v.Parity != "":
		s += ", " + oneLine(v.Parity)
	case tolerance(in) && status == "pass":
		s += ", bitwise"
	}
	return s
}

// origin says where a hand-written variant came from: its file and the
// first 12 digits of the file's sha256.
func origin(v *Variant) string {
	s := "hand-written"
	if v.File != "" {
		s += " " + code(v.File)
	}
	if h := v.FileSHA256; h != "" {
		if len(h) > 12 {
			h = h[:12]
		}
		s += ", sha256 " + h
	}
	return s
}

func outsideText(v *Variant) string {
	s := "changes code outside --fn"
	if v.Outside != "" {
		s += ": " + oneLine(v.Outside)
	}
	return s
}

// attemptsText is "3 of 3 attempts contaminated".
func attemptsText(contaminated, attempts int) string {
	if attempts == 1 {
		if contaminated == 1 {
			return "its only attempt contaminated"
		}
		return "its only attempt clean"
	}
	return fmt.Sprintf("%d of %d attempts contaminated", contaminated, attempts)
}

var (
	allAttempts  = regexp.MustCompile(`contaminated in all (\d+) attempts?`)
	reasonCase   = regexp.MustCompile(`^(?:target|case) (.+?): `)
	reasonConf   = regexp.MustCompile(`^confirmation (\d+): `)
	notePhase    = regexp.MustCompile(`^([a-z0-9-]+) \(`)
	noteAttempts = regexp.MustCompile(`\((\d+) contaminated attempts?\)`)
)

// attemptsFixed makes a rule's reason count a measurement's attempts as
// its contamination note does: the reason is worded from the attempt the
// rule was shown, the note from every attempt stored. The note's count
// (Attempts, or the count its text states) wins; without a note for the
// variant, the reason's case and its phase the reason is kept as it is.
func attemptsFixed(in *Input, variant, reason string) string {
	m := allAttempts.FindStringSubmatchIndex(reason)
	if m == nil {
		return reason
	}
	wantCase, wantPhase := "", ""
	if c := reasonCase.FindStringSubmatch(reason); c != nil {
		wantCase, wantPhase = c[1], "confirm"
	} else if c := reasonConf.FindStringSubmatch(reason); c != nil {
		wantPhase = "confirmation-" + c[1]
	} else {
		return reason
	}
	n := 0
	for _, note := range in.Contamination {
		if note.Variant != variant || (wantCase != "" && note.Case != wantCase) {
			continue
		}
		phase, _ := noteParts(note)
		if phase == "" {
			if p := notePhase.FindStringSubmatch(note.Text); p != nil {
				phase = p[1]
			}
		}
		if phase != "" && phase != wantPhase {
			continue
		}
		switch {
		case note.Attempts > 0 && note.ContaminatedAttempts == note.Attempts:
			n = note.Attempts
		case note.Attempts == 0:
			if t := noteAttempts.FindStringSubmatch(note.Text); t != nil {
				n, _ = strconv.Atoi(t[1])
			}
		}
	}
	if n == 0 {
		return reason
	}
	what := fmt.Sprintf("contaminated in all %d attempts", n)
	if n == 1 {
		what = "contaminated in its only attempt"
	}
	return reason[:m[0]] + what + reason[m[1]:]
}

// noteLead is the start of a note's text that names its phase and
// counts its contaminated attempts: "confirm (3 contaminated attempts): ".
var noteLead = regexp.MustCompile(`^([a-z0-9-]+) \(\d+ contaminated attempts?\): `)

// noteParts is a note's phase, from its text's lead when the note does
// not state it, and its text, without the lead when the note gives its
// counts (the report states them).
func noteParts(n Note) (phase, text string) {
	phase, text = n.Phase, n.Text
	if m := noteLead.FindStringSubmatch(text); m != nil {
		if phase == "" {
			phase = m[1]
		}
		if n.Attempts > 0 && phase == m[1] {
			text = text[len(m[0]):]
		}
	}
	return phase, text
}

// notConfirmedLine says why the confirmation has no table: nothing was
// timed at all, or variants were timed in the exploration only.
func notConfirmedLine(in *Input) string {
	explored := 0
	if in.Ablation != nil {
		explored = len(in.Ablation.Rows)
	}
	if explored == 0 {
		return "No variant was timed."
	}
	what, was := fmt.Sprintf("%d variants were", explored), "none was"
	if explored == 1 {
		what, was = "1 variant was", "it was not"
	}
	return fmt.Sprintf("No variant was confirmed: %s timed at the explore case only (Exploratory ablation, below), and %s confirmed at the confirmation cases.", what, was)
}

// GainText states a ratio after/before as the report does: the gain,
// positive when the variant is faster, with the word ("+4.21% faster",
// "-0.38% slower", "+0.00%"), for every line outside the report that
// quotes a timing (the sweep's progress), so that no output reads a sign
// the other way.
func GainText(ratio float64) string {
	s := gainPct(ratio)
	switch g := gainOf(ratio); {
	case g > 0:
		s += " faster"
	case g < 0:
		s += " slower"
	}
	return s
}
