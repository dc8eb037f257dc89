package report

import (
	"fmt"
	"math"
)

// An Input is everything a report shows. The sweep fills it from its
// results store; Render never computes a statistic, it shows what the
// measuring code computed. Durations are nanoseconds. The JSON field
// names are report.json's and are kept stable.
type Input struct {
	Title      string     `json:"title"` // e.g. "qsa_flash in kernels/qsa_prompt.metal"
	Plan       Plan       `json:"plan"`
	Provenance Provenance `json:"provenance"`
	// BaselineTGBytes is the baseline's static threadgroup memory in
	// bytes; -1 unknown.
	BaselineTGBytes int64     `json:"baseline_tg_bytes"`
	Variants        []Variant `json:"variants"`           // every variant the sweep built, in the order to show them
	Ablation        *Ablation `json:"ablation,omitempty"` // the exploratory ablation; nil when the strategy had none
	Controls        []Control `json:"controls"`           // the baseline timed against itself
	Contamination   []Note    `json:"contamination"`      // what the measurements' contamination flags say, in words
	// Verification says how every variant was verified and confirmed
	// ("verified on cpu (...) in the checking mode at 3 cases of quick;
	// confirmed on cuda (...)"), or that variants were not verified.
	Verification string `json:"verification,omitempty"`
	// Verified is false when the variants were not verified: every
	// variant then says "not verified".
	Verified bool `json:"verified"`
	// BaselineFindings are what the checking mode found in the baseline
	// itself: reported once, they do not stop the sweep.
	BaselineFindings []string `json:"baseline_findings,omitempty"`
}

// A Plan is what the sweep declared before its first measurement.
type Plan struct {
	Hash        string   `json:"hash"`                   // the plan's hash in the results store
	Strategy    string   `json:"strategy,omitempty"`     // "ablate", "greedy", ...
	Rule        string   `json:"rule"`                   // the decision rule, as declared
	Kernel      string   `json:"kernel"`                 // the kernel source, as given to the sweep
	Functions   []string `json:"functions"`              // the owned functions
	Cases       []string `json:"cases"`                  // the confirmation cases
	ExploreCase string   `json:"explore_case,omitempty"` // the case exploration timed at
	Pairs       int      `json:"pairs"`                  // alternating A/B pairs per measurement
	CILevel     float64  `json:"ci_level"`               // confidence level of the intervals, e.g. 0.95
	Baseline    string   `json:"baseline_sha256"`        // hex sha256 of the baseline source
	TGLimit     int64    `json:"tg_limit_bytes"`         // threadgroup memory limit; 0 none
	// Parity is the rule outputs were compared by: "bitwise" (the
	// default; "" reads as bitwise) or a tolerance as given to --parity,
	// "ulp=4" or "rel=1e-6". Under a tolerance the report says "not
	// bitwise" at its top and on every variant so judged.
	Parity string `json:"parity,omitempty"`
	// Tune describes the spec's tunable parameters and their
	// restrictions ("NSG in 2, 4, 8; TILE in 32..128 step 32; NSG*TILE <=
	// 512"); "" when the spec has no tune: section.
	Tune string `json:"tune,omitempty"`
	// Scope is the part of the source a patch may change: "fn" (the
	// owned functions, the default; "" reads as fn) or "file".
	Scope string `json:"scope,omitempty"`
}

// A Provenance says what produced the numbers.
type Provenance struct {
	Version  string `json:"metalab_version"`
	Backend  string `json:"backend"`
	Device   string `json:"device"`
	Compiler string `json:"compiler"`
	// Clock says what the timings are, as the backend states it: for the
	// cpu backend "cpu emulator timings exercise the loop, they are not GPU
	// claims".
	Clock string `json:"clock"`
	Store string `json:"store,omitempty"` // the results store the report was made from
}

// A Variant is one variant of the sweep and everything it came to.
type Variant struct {
	Name   string   `json:"name"`
	SHA256 string   `json:"sha256"`
	Refs   []string `json:"refs"`
	// Label describes the variant in words ("four partial buffers only",
	// "+ pre-added k offsets"); optional, the name stands in for it.
	Label   string `json:"label,omitempty"`
	Compile string `json:"compile"` // "ok", or the failure ("compile-error", "refused", ...)
	// Check is the outcome of the variant's checks: "pass" when its
	// verification and confirmation passed (confirmation alone when not
	// verified), else the first failure's status, "proof-violated" for a
	// variant of proven operators only that failed (metalab's bug), or
	// "fail-after-timing"; "" when not checked yet.
	Check        string `json:"check"`
	CheckMessage string `json:"check_message,omitempty"` // the first failure, in words
	// Verification is the first part of the verdict, on the verification
	// backend in the checking mode: "pass", the failure's status, "not
	// verified", or "" when not reached. Confirmation is the second, on
	// the timing backend at every timed case: "pass", the failure's
	// status, or "" when not reached. AfterTiming is the check of the
	// last timed sample's outputs after each measurement: "pass",
	// "fail-after-timing", or "" when never timed.
	Verification string `json:"verification"`
	Confirmation string `json:"confirmation"`
	// HeldOut is how many held-out cases (drawn from the spec's domains,
	// not listed in it) the variant's verification ran.
	HeldOut     int    `json:"held_out,omitempty"`
	AfterTiming string `json:"after_timing,omitempty"`
	// Stopped says where the variant stopped: "build", "verification",
	// "confirmation", "after timing", or "" when it went on to be timed.
	Stopped string `json:"stopped,omitempty"`
	// ProofViolated: the variant is made only of operators that claim to
	// keep outputs bitwise identical, and it failed: a bug in metalab.
	ProofViolated bool     `json:"proof_violated,omitempty"`
	TGBytes       int64    `json:"tg_bytes"`          // static threadgroup memory; -1 unknown
	Cases         []Case   `json:"cases"`             // per confirmation case
	Verdict       string   `json:"verdict,omitempty"` // "retain", "reject", "inconclusive"; "" when never timed
	Reasons       []string `json:"reasons,omitempty"` // the rule's reasons for the verdict
	Patch         string   `json:"patch,omitempty"`   // the patch file written for a retained variant

	// Kind is where the variant came from: KindGenerated (metalab's
	// operators; "" reads as generated) or KindHandWritten (a file given
	// to sweep --variant). File and FileSHA256 name a hand-written
	// variant's file as given and the sha256 of its bytes as read.
	Kind       string `json:"kind,omitempty"`
	File       string `json:"file,omitempty"`
	FileSHA256 string `json:"file_sha256,omitempty"`
	// OutsideFn: the variant changes code outside the owned functions
	// (--fn), a #define or a helper; Outside says what, in words
	// ("#define NSG, helper load_tile"). PatchRefused is why a retained
	// variant got no patch ("it changes code outside --fn; --scope file
	// allows it"); "" when it got one or was not retained.
	OutsideFn    bool   `json:"outside_fn,omitempty"`
	Outside      string `json:"outside,omitempty"`
	PatchRefused string `json:"patch_refused,omitempty"`
	// Point is the tunable-parameter point the variant ran at, as
	// "NSG=4 TILE=64" in the spec's order; "" when the spec has no tune:
	// section.
	Point string `json:"point,omitempty"`
	// Parity is the judgement of a variant compared under a tolerance
	// whose outputs were not bitwise identical ("not bitwise: ulp≤4, max
	// 2 ulp in out at case full"); "" when bitwise identical or compared
	// bitwise.
	Parity string `json:"parity,omitempty"`
	// HostNote names the host-side value to change for a retained
	// parameter change that is not a #define ("set threads to (64,1,1)
	// in the host"); such a change has no patch of its own.
	HostNote string `json:"host_note,omitempty"`
}

// Variant kinds.
const (
	KindGenerated   = "generated"
	KindHandWritten = "hand-written"
)

// HandWritten reports whether v came from a file given to the sweep.
func (v *Variant) HandWritten() bool { return v.Kind == KindHandWritten }

// A Case is a variant at one case.
type Case struct {
	Case    string `json:"case"`
	Bitwise string `json:"bitwise"` // the checks' status at this case ("pass", "fail-parity", ...): the verification's failure, else the confirmation's; "" not checked
	// Verification and Confirmation are the two parts' statuses at this
	// case ("" when the part did not run here); AfterTiming the check
	// after its measurements here.
	Verification string `json:"verification,omitempty"`
	Confirmation string `json:"confirmation,omitempty"`
	AfterTiming  string `json:"after_timing,omitempty"`
	Message      string `json:"message,omitempty"` // the check's message at this case
	// Parity is the tolerance judgement at this case when the outputs
	// were not bitwise identical ("not bitwise: max 2 ulp in out"); ""
	// when bitwise identical or compared bitwise.
	Parity string  `json:"parity,omitempty"`
	Timing *Timing `json:"timing,omitempty"` // nil when not timed here
}

// A Timing is one measurement's statistics and its raw pairs.
type Timing struct {
	Pairs   int     `json:"pairs"`
	MedianA float64 `json:"median_a_ns"` // before: the baseline
	MedianB float64 `json:"median_b_ns"` // after: the variant
	// Ratio is the median of the per-pair ratios B/A: 0.95 is 5% faster.
	Ratio        float64   `json:"ratio"`
	CI           *Interval `json:"ci,omitempty"` // interval of Ratio at Plan.CILevel; nil when not computed
	Contaminated bool      `json:"contaminated"`
	Flags        []string  `json:"flags,omitempty"`   // contamination flags
	Samples      []Pair    `json:"samples,omitempty"` // the raw pairs, for the plots
}

// An Interval is a closed interval of ratios.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// A Pair is one alternating A/B pair.
type Pair struct {
	Index  int     `json:"pair"`
	A      float64 `json:"a_ns"`
	B      float64 `json:"b_ns"`
	BFirst bool    `json:"b_first"` // B ran first in this pair
}

// An Ablation is the exploratory table: variants timed at one case.
type Ablation struct {
	Case string        `json:"case"`
	Rows []AblationRow `json:"rows"`
}

// An AblationRow is one variant of the exploratory ablation.
type AblationRow struct {
	Variant string `json:"variant"`         // the variant's name
	Label   string `json:"label,omitempty"` // as Variant.Label
	Point   string `json:"point,omitempty"` // as Variant.Point
	Bitwise string `json:"bitwise"`         // its check status at the ablation case
	Timing  Timing `json:"timing"`
}

// A Control is the baseline timed against itself: its ratio and spread
// show the noise a variant's change must stand out from.
type Control struct {
	Case         string   `json:"case"`
	Phase        string   `json:"phase,omitempty"`
	Pairs        int      `json:"pairs"`
	MedianA      float64  `json:"median_a_ns"`
	MedianB      float64  `json:"median_b_ns"`
	Ratio        float64  `json:"ratio"`     // median pair ratio
	RatioMin     float64  `json:"ratio_min"` // the spread: smallest per-pair ratio
	RatioMax     float64  `json:"ratio_max"` // largest per-pair ratio
	Contaminated bool     `json:"contaminated"`
	Flags        []string `json:"flags,omitempty"`
}

// A Note is a contamination note: what was seen in which measurement and
// what the report does not claim because of it.
type Note struct {
	Variant string `json:"variant,omitempty"` // a variant's name; "" for a control
	Case    string `json:"case,omitempty"`
	Phase   string `json:"phase,omitempty"` // the measurement's phase ("confirm", "explore", ...)
	Text    string `json:"text"`
	// Attempts is how many times the measurement was taken and
	// ContaminatedAttempts how many of those were contaminated; 0 when
	// not given. When they are equal every attempt was contaminated and
	// the measurement decides nothing. The report states these counts
	// wherever it counts attempts.
	Attempts             int `json:"attempts,omitempty"`
	ContaminatedAttempts int `json:"contaminated_attempts,omitempty"`
}

// Validate reports the first thing in the input a report cannot show:
// a missing name, a duplicate variant, a statistic that is not a finite
// number, a negative count or duration.
func (in *Input) Validate() error {
	if in == nil {
		return fmt.Errorf("report input: nil")
	}
	if err := finite("plan ci_level", in.Plan.CILevel); err != nil {
		return err
	}
	if in.Plan.Pairs < 0 {
		return fmt.Errorf("report input: plan: %d pairs", in.Plan.Pairs)
	}
	seen := map[string]bool{}
	for i, v := range in.Variants {
		if v.Name == "" {
			return fmt.Errorf("report input: variant %d has no name", i)
		}
		if seen[v.Name] {
			return fmt.Errorf("report input: variant %s listed twice", v.Name)
		}
		seen[v.Name] = true
		switch v.Kind {
		case "", KindGenerated, KindHandWritten:
		default:
			return fmt.Errorf("report input: variant %s: kind %q (want %q or %q)", v.Name, v.Kind, KindGenerated, KindHandWritten)
		}
		for _, c := range v.Cases {
			if c.Case == "" {
				return fmt.Errorf("report input: variant %s: a case has no name", v.Name)
			}
			if c.Timing != nil {
				if err := c.Timing.validate(v.Name + " at " + c.Case); err != nil {
					return err
				}
			}
		}
	}
	if a := in.Ablation; a != nil {
		for _, r := range a.Rows {
			if r.Variant == "" {
				return fmt.Errorf("report input: ablation row without a variant")
			}
			if err := r.Timing.validate("ablation " + r.Variant); err != nil {
				return err
			}
		}
	}
	for i, n := range in.Contamination {
		if n.Attempts < 0 || n.ContaminatedAttempts < 0 || (n.Attempts > 0 && n.ContaminatedAttempts > n.Attempts) {
			return fmt.Errorf("report input: contamination note %d: %d of %d attempts contaminated", i, n.ContaminatedAttempts, n.Attempts)
		}
	}
	for _, c := range in.Controls {
		what := "control at " + c.Case
		if c.Case == "" {
			return fmt.Errorf("report input: a control has no case")
		}
		if c.Pairs < 0 {
			return fmt.Errorf("report input: %s: %d pairs", what, c.Pairs)
		}
		if err := finite(what, c.MedianA, c.MedianB, c.Ratio, c.RatioMin, c.RatioMax); err != nil {
			return err
		}
	}
	return nil
}

func (t *Timing) validate(what string) error {
	if t.Pairs < 0 {
		return fmt.Errorf("report input: %s: %d pairs", what, t.Pairs)
	}
	if err := finite(what, t.MedianA, t.MedianB, t.Ratio); err != nil {
		return err
	}
	if t.CI != nil {
		if err := finite(what+" interval", t.CI.Low, t.CI.High); err != nil {
			return err
		}
	}
	for _, p := range t.Samples {
		if err := finite(fmt.Sprintf("%s pair %d", what, p.Index), p.A, p.B); err != nil {
			return err
		}
	}
	return nil
}

func finite(what string, vs ...float64) error {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("report input: %s: %v is not a finite number", what, v)
		}
		if v < 0 {
			return fmt.Errorf("report input: %s: %v is negative", what, v)
		}
	}
	return nil
}
