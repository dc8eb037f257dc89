package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"metalab/backend"
	"metalab/check"
	"metalab/measure"
	"metalab/report"
	"metalab/search/store"
)

// BuildInput reads what the store holds under plan p into a report's
// input: every variant with its compile, checks, confirmation timings
// and verdict, the exploratory table, the controls and the contamination
// notes. sp labels the variants and orders them (by size, then source
// order of their atoms); dir is the sweep's directory, where patches are
// looked for. Statistics are recomputed from the stored pairs, so the same
// store gives the same report.
func BuildInput(ctx context.Context, st *store.Store, p *Plan, sp *Space, prov report.Provenance, dir string) (*report.Input, error) {
	in := &report.Input{
		Title:           strings.Join(p.Functions, ", ") + " in " + p.Kernel,
		Provenance:      prov,
		BaselineTGBytes: -1,
	}
	rows := map[store.Stage][]store.Row{}
	for _, stage := range []store.Stage{store.StageVariant, store.StageCompile, store.StageCheck, store.StageConfirm, store.StageSummary, store.StageControl, store.StageDecision} {
		r, err := st.Results(ctx, store.Query{Stage: stage})
		if err != nil {
			return nil, err
		}
		rows[stage] = r
	}
	type mkey struct{ variant, c, phase string }
	compiles := map[string]store.Compile{}
	for _, r := range rows[store.StageCompile] {
		if _, ok := compiles[r.Variant]; !ok {
			compiles[r.Variant] = *r.Compile
		}
	}
	checks := map[[2]string]store.Check{}
	for _, r := range rows[store.StageCheck] {
		k := [2]string{r.Variant, r.Case}
		if _, ok := checks[k]; !ok {
			checks[k] = *r.Check
		}
	}
	// Confirmations before timing by variant and case; the checks after
	// timing by variant and case, a failure over a pass.
	confirms := map[[2]string]store.Confirmation{}
	afters := map[[2]string]store.Confirmation{}
	for _, r := range rows[store.StageConfirm] {
		k := [2]string{r.Variant, r.Case}
		if r.Phase == "" {
			confirms[k] = *r.Confirm
		} else if a, ok := afters[k]; !ok || a.Status == string(check.Pass) {
			afters[k] = *r.Confirm
		}
	}
	decisions := map[string]store.Decision{}
	for _, r := range rows[store.StageDecision] {
		if _, ok := decisions[r.Variant]; !ok {
			decisions[r.Variant] = *r.Decision
		}
	}
	// Measurements by key, oldest first, as the store lists them.
	meas := map[mkey][]store.Measurement{}
	var keys []mkey
	for _, stage := range []store.Stage{store.StageSummary, store.StageControl} {
		for _, r := range rows[stage] {
			k := mkey{r.Variant, r.Case, r.Phase}
			if _, ok := meas[k]; !ok {
				keys = append(keys, k)
			}
			meas[k] = append(meas[k], store.Measurement{ID: r.Measurement, Key: r.Key, Summary: r.Summary})
		}
	}
	timings := map[mkey]*timed{}
	for _, k := range keys {
		t, err := analyzeStored(ctx, st, p, meas[k], "")
		if err != nil {
			return nil, err
		}
		timings[k] = t
	}

	if c, ok := compiles[p.Baseline]; ok {
		in.BaselineTGBytes = c.TGBytes
	}
	var vs []store.Row
	for _, r := range rows[store.StageVariant] {
		if r.Variant != p.Baseline {
			vs = append(vs, r)
		}
	}
	order := func(r store.Row) []int {
		var idx []int
		for _, ref := range r.Refs {
			idx = append(idx, sp.index(ref))
		}
		slices.Sort(idx)
		return idx
	}
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := order(vs[i]), order(vs[j])
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		if c := slices.Compare(a, b); c != 0 {
			return c < 0
		}
		return vs[i].Name < vs[j].Name
	})
	names := map[string]string{p.Baseline: "baseline"}
	for _, r := range vs {
		names[r.Variant] = r.Name
	}
	labels := labelVariants(sp, vs)

	for _, r := range vs {
		v := report.Variant{Name: r.Name, SHA256: r.Variant, Refs: r.Refs, Label: labels[r.Variant], TGBytes: -1, Kind: report.KindGenerated}
		if _, pt, err := splitPointRef(r.Refs); err == nil && len(pt) > 0 {
			v.Point = pt.String()
		}
		if notes := readHostNotes(dir, r.Name); len(notes) > 0 {
			v.HostNote = strings.Join(notes, "; ")
		}
		if hw := handWrittenOf(sp, r.Refs); hw != nil {
			v.Kind, v.File, v.FileSHA256 = report.KindHandWritten, hw.File.Path, hw.File.SHA256
			if hw.File.OutsideFn != "" {
				v.OutsideFn, v.Outside = true, hw.File.OutsideFn
			}
		}
		if c, ok := compiles[r.Variant]; ok {
			v.Compile, v.TGBytes = c.Status, c.TGBytes
			if c.Status != "ok" {
				v.CheckMessage = c.Message
			}
		}
		if v.Compile == "ok" {
			partsOf(&v, p, r.Variant, checks, confirms, afters)
		} else if v.Compile != "" {
			v.Check, v.Stopped = v.Compile, check.PartBuild
		}
		if v.Check != "" && v.Check != string(check.Pass) && v.Check != string(check.FailAfterTiming) && ProofClaimed(r.Refs) && ProofViolation(v.Check) {
			v.ProofViolated = true
			v.CheckMessage = fmt.Sprintf("proof violated, a bug in metalab: every operator of this variant claims to keep outputs bitwise identical, and it failed its %s with %s: %s", v.Stopped, v.Check, v.CheckMessage)
			v.Check = string(check.ProofViolated)
		}
		confirmed := false
		for _, c := range reportCases(p) {
			rc := report.Case{Case: c}
			if ck, ok := checks[[2]string{r.Variant, c}]; ok && (p.Verify == nil || !p.Verify.Off) {
				rc.Verification, rc.Bitwise, rc.Message = ck.Status, ck.Status, ck.Message
			}
			if cf, ok := confirms[[2]string{r.Variant, c}]; ok {
				rc.Confirmation = cf.Status
				if rc.Bitwise == "" || rc.Bitwise == string(check.Pass) {
					rc.Bitwise, rc.Message = cf.Status, cf.Message
				}
			}
			if a, ok := afters[[2]string{r.Variant, c}]; ok {
				rc.AfterTiming = a.Status
				if a.Status != string(check.Pass) {
					rc.Bitwise, rc.Message = a.Status, a.Message
				}
			}
			if t := timings[mkey{r.Variant, c, PhaseConfirm}]; t != nil {
				rc.Timing, confirmed = timingOf(t), true
			}
			rc.Parity = notBitwise(checks[[2]string{r.Variant, c}].Message, confirms[[2]string{r.Variant, c}].Message, afters[[2]string{r.Variant, c}].Message)
			if rc.Parity != "" && v.Parity == "" {
				v.Parity = rc.Parity
			}
			if rc.Bitwise != "" || rc.Timing != nil {
				v.Cases = append(v.Cases, rc)
			}
		}
		for i := 1; i <= p.Rule.Confirmations; i++ {
			if t := timings[mkey{r.Variant, p.Target, confirmPhase(i)}]; t != nil {
				rc := report.Case{Case: fmt.Sprintf("%s (confirmation %d)", p.Target, i), Timing: timingOf(t)}
				if cf, ok := confirms[[2]string{r.Variant, p.Target}]; ok {
					rc.Bitwise = cf.Status
				} else if ck, ok := checks[[2]string{r.Variant, p.Target}]; ok {
					rc.Bitwise = ck.Status
				}
				v.Cases = append(v.Cases, rc)
			}
		}
		if d, ok := decisions[r.Variant]; ok {
			v.Verdict, v.Reasons = d.Verdict, d.Reasons
			if d.Verdict == string(measure.Retain) {
				rel := filepath.Join(PatchesDir, fileName(r.Name)+".patch")
				if _, err := os.Stat(filepath.Join(dir, rel)); err == nil {
					v.Patch = filepath.ToSlash(rel)
				} else if v.HostNote != "" && v.Point != "" {
					// A point whose change is on the host only: its notes
					// are the change.
				} else if v.OutsideFn && p.Search.Scope != "file" {
					v.PatchRefused = "it changes code outside --fn (" + v.Outside + "); --scope file allows it"
				} else {
					v.Reasons = append(v.Reasons, "no patch: it was refused (see the variant's log) or not written yet")
				}
			}
		} else if confirmed {
			v.Verdict = string(measure.Pending)
			v.Reasons = []string{"not decided: the sweep stopped before the rule could decide (a budget ran out, or it was interrupted: resume it)"}
		}
		in.Variants = append(in.Variants, v)

		if t := timings[mkey{r.Variant, p.Explore.Case, PhaseExplore}]; t != nil {
			if in.Ablation == nil {
				in.Ablation = &report.Ablation{Case: p.Explore.Case}
			}
			row := report.AblationRow{Variant: r.Name, Label: labels[r.Variant], Timing: *timingOf(t), Point: v.Point}
			if a, ok := afters[[2]string{r.Variant, p.Explore.Case}]; ok && a.Status != string(check.Pass) {
				row.Bitwise = a.Status
			} else if cf, ok := confirms[[2]string{r.Variant, p.Explore.Case}]; ok {
				row.Bitwise = cf.Status
			} else if ck, ok := checks[[2]string{r.Variant, p.Explore.Case}]; ok {
				row.Bitwise = ck.Status
			}
			in.Ablation.Rows = append(in.Ablation.Rows, row)
		}
	}

	phaseRank := map[string]int{PhaseExplore: 0, PhaseBefore: 1, PhaseAfter: 2}
	var controls []mkey
	for _, k := range keys {
		if k.variant == p.Baseline {
			controls = append(controls, k)
		}
	}
	sort.SliceStable(controls, func(i, j int) bool {
		if a, b := phaseRank[controls[i].phase], phaseRank[controls[j].phase]; a != b {
			return a < b
		}
		return controls[i].c < controls[j].c
	})
	for _, k := range controls {
		t := timings[k]
		s := t.Stats
		in.Controls = append(in.Controls, report.Control{
			Case: k.c, Phase: k.phase, Pairs: s.N, MedianA: float64(s.MedianA), MedianB: float64(s.MedianB),
			Ratio: s.Ratio, RatioMin: s.MinRatio, RatioMax: s.MaxRatio, Contaminated: t.Contaminated, Flags: flagStrings(t.Result),
		})
	}
	for _, k := range keys {
		t := timings[k]
		if len(t.contaminated) == 0 {
			continue
		}
		n := report.Note{Case: k.c, Attempts: t.attempts, ContaminatedAttempts: len(t.contaminated)}
		if k.variant != p.Baseline {
			n.Variant = names[k.variant]
		}
		var parts []string
		for i, f := range t.contaminated {
			parts = append(parts, fmt.Sprintf("attempt %d: %s", i+1, f))
		}
		what := "measured again; the last attempt is clean and is the one shown"
		if t.Contaminated {
			what = "every attempt was contaminated: it decides nothing"
		}
		n.Text = fmt.Sprintf("%s (%s): %s; %s", k.phase, pluralize(len(t.contaminated), "contaminated attempt"), strings.Join(parts, "; "), what)
		in.Contamination = append(in.Contamination, n)
	}

	for _, r := range rows[store.StageCheck] {
		if r.Variant == p.Baseline && r.Check.Status == string(check.Pass) && r.Check.Findings > 0 && r.Check.Message != "" {
			in.BaselineFindings = append(in.BaselineFindings, fmt.Sprintf("%s: %s (%s at this case)", r.Case, r.Check.Message, pluralize(r.Check.Findings, "finding")))
		}
	}
	in.Verified = p.Verify != nil && !p.Verify.Off
	in.Verification = verificationText(p, backendInfo(rows[store.StageCheck], p, true), backendInfo(rows[store.StageConfirm], p, false))
	in.Plan = report.Plan{
		Hash: st.PlanHash(), Strategy: strategyText(p, sp, len(vs)), Rule: PlanRuleText(p) + " (rule sha256 " + p.RuleSHA256[:12] + ")",
		Kernel: p.Kernel, Functions: p.Functions, Cases: p.Cases, ExploreCase: p.Explore.Case, Pairs: p.Confirm.Pairs,
		CILevel: p.Rule.Confidence, Baseline: p.Baseline, TGLimit: int64(p.TGLimit), Scope: p.Search.Scope, Parity: p.Parity, Tune: tuneText(p),
	}
	return in, nil
}

// timingOf is a measurement as a report shows it.
func timingOf(t *timed) *report.Timing {
	s := t.Stats
	out := &report.Timing{
		Pairs: s.N, MedianA: float64(s.MedianA), MedianB: float64(s.MedianB), Ratio: s.Ratio,
		CI: &report.Interval{Low: s.Lo, High: s.Hi}, Contaminated: t.Contaminated, Flags: flagStrings(t.Result),
	}
	for i, pr := range t.Pairs() {
		out.Samples = append(out.Samples, report.Pair{Index: i, A: float64(pr.A), B: float64(pr.B), BFirst: !pr.AFirst})
	}
	return out
}

func flagStrings(r *measure.Result) []string {
	var out []string
	for _, f := range r.Flags {
		out = append(out, f.String())
	}
	return out
}

// labelVariants describes each variant by what it adds to a smaller one
// the sweep built ("+ ..."), what it leaves out of a larger one
// ("without ..."), or its atom.
func labelVariants(sp *Space, vs []store.Row) map[string]string {
	sets := map[string][]string{}
	for _, r := range vs {
		sets[r.Variant] = r.Refs
	}
	atomLabel := func(ref string) string {
		if i := sp.index(ref); i >= 0 {
			return sp.Label(i)
		}
		if hw := sp.fileOf(ref); hw != nil {
			// The report shows its origin (file, sha256, change outside
			// --fn) itself.
			return ""
		}
		return ref
	}
	diff := func(a, b []string) []string { // a minus b
		var out []string
		for _, x := range a {
			if !slices.Contains(b, x) {
				out = append(out, x)
			}
		}
		return out
	}
	out := map[string]string{}
	for _, r := range vs {
		if rest, pt, err := splitPointRef(r.Refs); err == nil && len(pt) > 0 {
			// At a point: what its source is, at the point.
			var parts []string
			for _, ref := range rest {
				parts = append(parts, atomLabel(ref))
			}
			// (the report shows the point beside the label)
			what := "the baseline's source"
			if len(parts) > 0 {
				what = strings.Join(parts, " + ")
			}
			out[r.Variant] = what
			continue
		}
		if len(r.Refs) == 1 {
			out[r.Variant] = atomLabel(r.Refs[0])
			continue
		}
		for _, o := range vs {
			if len(o.Refs) == len(r.Refs)-1 && len(diff(o.Refs, r.Refs)) == 0 {
				out[r.Variant] = "+ " + atomLabel(diff(r.Refs, o.Refs)[0])
				break
			}
		}
		if out[r.Variant] != "" {
			continue
		}
		for _, o := range vs {
			if len(o.Refs) == len(r.Refs)+1 && len(diff(r.Refs, o.Refs)) == 0 {
				out[r.Variant] = "without " + atomLabel(diff(o.Refs, r.Refs)[0])
				break
			}
		}
		if out[r.Variant] == "" {
			out[r.Variant] = fmt.Sprintf("%d sites", len(r.Refs))
		}
	}
	return out
}

// strategyText describes the search for the report.
func strategyText(p *Plan, sp *Space, built int) string {
	s := p.Search
	ops := "every operator"
	if len(s.Ops) > 0 {
		ops = strings.Join(s.Ops, ", ")
	}
	text := fmt.Sprintf("%s over %d atoms (%s; %s choice", s.Strategy, len(sp.Atoms), ops, s.Choices)
	if s.Choices == "all" {
		text = fmt.Sprintf("%s over %d atoms (%s; every choice", s.Strategy, len(sp.Atoms), ops)
	}
	text += fmt.Sprintf(" of %d sites), seed %d", len(sp.Sites), s.Seed)
	if s.Strategy == "" || s.OnlyFiles() {
		text = fmt.Sprintf("no edit search, seed %d", s.Seed)
	}
	if len(s.Files) > 0 {
		text = fmt.Sprintf("%s first, then %s", pluralize(len(s.Files), "hand-written variant"), text)
	}
	if s.Point != "" {
		text += "; edits and hand-written variants at " + s.Point
	}
	if s.Tune != "" {
		text += fmt.Sprintf("; %s over %d points of the tunable parameters (%s), on the baseline's source, every hand-written variant and every edit variant that passed", s.Tune, len(s.Points), strings.Join(s.Points, "; "))
	}
	if strategyOf(s.Strategy).Width {
		text += fmt.Sprintf(", width %d", s.Beam)
	}
	if s.MinStep > 0 && strategyOf(s.Strategy).Step {
		text += fmt.Sprintf(", steps of at least %s", pctText(s.MinStep))
	}
	text += fmt.Sprintf("; budget %s; %d variants built", s.Budget, built)
	if b := s.Budget.Variants; b > 0 && built >= b {
		text += " (the variants budget ran out)"
	}
	per := "the spec's dispatches per sample"
	if d := p.Confirm.Dispatches; d > 0 {
		per = pluralize(d, "dispatch") + " per sample"
		if d > 1 {
			per = fmt.Sprintf("%d dispatches per sample", d)
		}
	}
	text += fmt.Sprintf("; explore %d pairs at %s, confirm the fastest %d with %d pairs at every case; %s; timed stages %s",
		p.Explore.Pairs, p.Explore.Case, p.Confirm.Top, p.Confirm.Pairs, per, strings.Join(p.TimedStages, ", "))
	switch sc := p.screen(); {
	case sc.Off:
		text += "; contamination screen off (--no-screen): no measurement is marked contaminated"
	case sc.MaxNoise > 0:
		text += fmt.Sprintf("; contamination screen at %s noise", pctText(sc.MaxNoise))
	}
	return text
}

func pluralize(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func jsonOf(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	return b, nil
}

// partsOf fills v's two parts, the check after timing and where it
// stopped from the store's rows. A plan from before the two parts has
// its checks alone, shown as the verification.
func partsOf(v *report.Variant, p *Plan, variant string, checks map[[2]string]store.Check, confirms, afters map[[2]string]store.Confirmation) {
	pass := string(check.Pass)
	if p.Verify != nil && p.Verify.Off {
		v.Verification = "not verified"
	} else {
		v.Verification = pass
		if failed, msg := heldOutOf(v, p, variant, checks); failed != "" {
			defer func() {
				// A held-out case failed: the verdict rests on it, after
				// any listed case that failed first.
				if v.Stopped != check.PartVerification {
					v.Verification, v.Stopped, v.Check, v.CheckMessage = failed, check.PartVerification, failed, msg
					v.Confirmation, v.AfterTiming = "", ""
				}
			}()
		}
		for _, c := range p.Checked {
			ck, ok := checks[[2]string{variant, c}]
			if !ok {
				v.Verification = "" // not every case verified yet
				continue
			}
			if ck.Status != pass {
				v.Verification, v.Stopped = ck.Status, check.PartVerification
				v.Check, v.CheckMessage = ck.Status, c+": "+ck.Message
				return
			}
		}
	}
	if p.Verify == nil {
		v.Check = v.Verification
		return
	}
	if v.Verification == "" {
		return
	}
	v.Confirmation = pass
	for _, c := range p.Cases {
		cf, ok := confirms[[2]string{variant, c}]
		if !ok {
			v.Confirmation = ""
			continue
		}
		if cf.Status != pass {
			v.Confirmation, v.Stopped = cf.Status, check.PartConfirmation
			v.Check, v.CheckMessage = cf.Status, c+": "+cf.Message
			return
		}
	}
	if v.Confirmation == "" {
		return
	}
	v.Check = pass
	for _, c := range p.Cases {
		a, ok := afters[[2]string{variant, c}]
		if !ok {
			continue
		}
		v.AfterTiming = a.Status
		if a.Status != pass {
			v.Stopped, v.Check, v.CheckMessage = "after timing", a.Status, c+": "+a.Message
			return
		}
	}
}

// heldOutOf counts the held-out cases of variant in the store's checks
// (cases check drew from the spec's domains, not the plan's) into
// v.HeldOut, and returns the status and message of the one that failed,
// the smallest (shrunk) first, or "".
func heldOutOf(v *report.Variant, p *Plan, variant string, checks map[[2]string]store.Check) (string, string) {
	var failing []string
	for k, ck := range checks {
		if k[0] != variant || slices.Contains(p.Checked, k[1]) {
			continue
		}
		if _, name, _ := strings.Cut(k[1], "/"); !strings.HasPrefix(name, "heldout") {
			continue
		}
		v.HeldOut++
		if ck.Status != string(check.Pass) {
			failing = append(failing, k[1])
		}
	}
	if len(failing) == 0 {
		return "", ""
	}
	sort.Slice(failing, func(i, j int) bool {
		si, sj := strings.Contains(failing[i], "-shrunk"), strings.Contains(failing[j], "-shrunk")
		if si != sj {
			return si
		}
		return failing[i] < failing[j]
	})
	ck := checks[[2]string{variant, failing[0]}]
	return ck.Status, "held-out case " + failing[0] + ": " + ck.Message
}

// reportCases are the cases a variant's report lists: the timed ones,
// then the other verification cases.
func reportCases(p *Plan) []string {
	out := slices.Clone(p.Cases)
	for _, c := range p.Checked {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// backendInfo is the backend and device the rows (checks for the
// verification, confirmations for the timing backend) were taken on, for
// the report's line about them.
func backendInfo(rows []store.Row, p *Plan, verify bool) backend.Info {
	if len(rows) > 0 {
		return backend.Info{Name: rows[0].Backend, Device: rows[0].Device}
	}
	name := p.Backend
	if verify && p.Verify != nil && p.Verify.Backend != "" {
		name = p.Verify.Backend
	}
	return backend.Info{Name: name, Device: "device not recorded"}
}

// handWrittenOf returns the hand-written variant the stored refs name, or
// nil.
func handWrittenOf(sp *Space, refs []string) *HandWritten {
	if len(refs) == 0 || !IsFileRef(refs[0]) {
		return nil
	}
	return sp.fileOf(refs[0])
}

// notBitwise returns the first of a case's stored messages that says it
// passed under a tolerance without being bitwise identical, or "".
func notBitwise(msgs ...string) string {
	for _, m := range msgs {
		if strings.HasPrefix(m, NotBitwisePrefix) {
			return m
		}
	}
	return ""
}

// tuneText describes the plan's parameter search for the report, or "".
func tuneText(p *Plan) string {
	s := p.Search
	if s.Tune == "" && s.Point == "" {
		return ""
	}
	var parts []string
	if s.Tune != "" {
		parts = append(parts, fmt.Sprintf("%s: %s", s.Tune, strings.Join(s.Points, "; ")))
	}
	if s.Point != "" {
		parts = append(parts, "fixed at "+s.Point)
	}
	return strings.Join(parts, "; ") + " (the baseline at the spec's defaults)"
}
