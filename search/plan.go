package search

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"metalab/check"
	"metalab/measure"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/all"
	"metalab/mutate/geometry"
	"metalab/search/store"
	"metalab/spec"
)

// PlanSchema is the value of a plan's "schema" field.
const PlanSchema = "metalab-sweep-plan/1"

// A Plan is everything a sweep declares before its first measurement: what
// it runs against (the baseline's and the spec's sha256), what it checks
// and times (cases, pairs, dispatches per sample), how it searches
// (strategy, operators, seed, budgets) and how it decides (the rule). Its
// JSON is written to plan.json and into the results store, whose hash of
// it keys every result, so results of one plan are never mixed with
// another's: changing anything here, the rule above all, is a new plan.
//
// Where the sweep runs (device, shard, output directory, repository to
// verify patches against) is not part of the plan, so that shards of one
// sweep on several machines share it.
type Plan struct {
	Schema string `json:"schema"`
	// Spec is the kernel spec's path as given, SpecSHA256 its bytes' hash.
	Spec       string `json:"spec"`
	SpecSHA256 string `json:"spec_sha256"`
	// Kernel is the spec's main source: the file the variants replace.
	Kernel string `json:"kernel"`
	// Baseline is the hex sha256 of Kernel's bytes when the sweep began.
	Baseline string `json:"baseline_sha256"`
	// Sources are every source the spec's stages compile, with their
	// sha256 (Kernel among them).
	Sources []Source `json:"sources"`
	// Path is the kernel's path in its repository, the label of patches.
	Path      string   `json:"path"`
	Functions []string `json:"functions"` // the owned functions (--fn)
	Macros    Macros   `json:"macros"`    // how the kernel is parsed for sites
	Backend   string   `json:"backend"`
	// Sets are the case sets every variant is confirmed and timed at;
	// CheckSets are verified only (with Verify.Sets).
	Sets      []string `json:"sets"`
	CheckSets []string `json:"check_sets,omitempty"`
	// Cases are the timed cases ("set/name"), in order: every variant is
	// confirmed at each on the timing backend. Checked are the
	// verification cases (Verify.Sets and CheckSets), or, with
	// verification off, Cases.
	Cases   []string `json:"cases"`
	Checked []string `json:"checked_cases"`
	// Verify says how variants are verified before they are timed. A plan
	// without it was made before variants were verified and confirmed
	// apart: its sweep's report renders, but it is not resumed.
	Verify *Verification `json:"verify"`
	// Target is the case the rule seeks the gain at.
	Target string `json:"target_case"`
	// TimedStages are the entries whose time a sample sums: the stages
	// running an owned function (every stage when none does). Stages
	// after the last of them do not run when timing.
	TimedStages []string `json:"timed_stages"`
	Explore     Phase    `json:"explore"`
	Confirm     Phase    `json:"confirm"`
	TGLimit     int      `json:"tg_limit_bytes"`
	Checking    bool     `json:"checking_mode"` // races, uninitialised reads and bounds are checked
	Race        bool     `json:"race"`          // thread orders are probed too
	Strict      bool     `json:"strict"`        // warnings fail
	// Parity is the rule a variant's outputs are compared with the
	// baseline's by, as check.ParseParity reads it: "" (bitwise, the
	// default) or an opt-in tolerance ("ulp=4", "rel=1e-6") for changes
	// that reorder arithmetic, under which every result that is not
	// bitwise identical says "not bitwise" and by how much.
	Parity string   `json:"parity,omitempty"`
	Search Settings `json:"search"`
	// Geometry is the threads per threadgroup every case of the spec
	// dispatches each entry with: the barrier proofs hold for these
	// shapes (two- and three-dimensional ones too). A plan without it
	// proves for one-dimensional threadgroups, as sweeps did before.
	Geometry   map[string][]msl.Dims `json:"geometry,omitempty"`
	Rule       measure.Rule          `json:"rule"`
	RuleSHA256 string                `json:"rule_sha256"`
	// Screen, when set, is the contamination screen of every measurement
	// (--max-noise, --no-screen); nil is measure's default screen.
	Screen *measure.Screen `json:"screen,omitempty"`
}

// screen is the plan's contamination screen.
func (p *Plan) screen() measure.Screen {
	if p.Screen == nil {
		return measure.Screen{}
	}
	return *p.Screen
}

// A Verification is the first part of every variant's verdict: it runs
// in the checking mode (bitwise parity, races, uninitialised reads,
// bounds) on the verification backend at the verification cases, before
// it is confirmed (bitwise parity on the timing backend at every timed
// case) and timed.
type Verification struct {
	// Off turns verification off (--no-verify): variants are confirmed on
	// the timing backend only, and every result says "not verified".
	Off bool `json:"off,omitempty"`
	// Backend is the verification backend ("cpu"); "" means the timing
	// backend, which has a checking mode of its own.
	Backend string `json:"backend,omitempty"`
	// Sets are the verification's case sets (the spec's default sets
	// unless --verify-cases names others).
	Sets []string `json:"sets,omitempty"`
	// HeldOut is how many held-out cases, drawn from the spec's domains,
	// each variant's verification adds to Sets' cases (see check's
	// Options.HeldOut); 0 draws none.
	HeldOut int `json:"held_out,omitempty"`
}

// A Source is one source file of the spec and its sha256.
type Source struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Macros are the preprocessor flags the kernel is parsed with to find
// sites (-D, -U, -I): the same flags give the same sites.
type Macros struct {
	Defines     []string `json:"defines,omitempty"`
	Undefs      []string `json:"undefs,omitempty"`
	IncludeDirs []string `json:"include_dirs,omitempty"`
}

// A Phase says how one phase of the sweep times a variant.
type Phase struct {
	// Case is the case exploration times at (explore only).
	Case string `json:"case,omitempty"`
	// Pairs, Warmup and MaxReruns are measure.Options'.
	Pairs     int `json:"pairs"`
	Warmup    int `json:"warmup"`
	MaxReruns int `json:"max_reruns"`
	// Dispatches is the number of dispatches one sample submits
	// together (check.ExecOptions.Repeat); 0 means each case's own, from
	// the spec's dispatches: (1 unless it says otherwise).
	Dispatches int `json:"dispatches"`
	// Top is how many explored variants are confirmed (confirm only).
	Top int `json:"top,omitempty"`
}

// Settings are the search's.
type Settings struct {
	Strategy string   `json:"strategy"`
	Ops      []string `json:"ops"`
	// Choices is "all" (every choice of every site is an atom) or
	// "first" (each site's first choice only).
	Choices string `json:"choices"`
	// Refs, when given, are the atoms in order: the stack's order, the
	// leave-one-out set, or the only atoms ablate, greedy and beam use.
	Refs []string `json:"refs,omitempty"`
	Seed uint64   `json:"seed"`
	// Beam is the beam's width (beam only).
	Beam int `json:"beam,omitempty"`
	// MinStep is the explore-ratio improvement a greedy or beam step
	// must make to go on (0.01: 1 % faster than the best so far).
	MinStep float64 `json:"min_step,omitempty"`
	Budget  Budget  `json:"budget"`
	// Files are the hand-written variants (--variant), each with its
	// sha256, judged before the strategy's. With files and neither Ops
	// nor Refs, only they are swept (no operator's site is searched).
	Files []VariantFile `json:"files,omitempty"`
	// Tune is the strategy over the spec's tunable parameters (a
	// Strategy over OverParams: grid or random); "" leaves them at Point.
	// Points are the points it tries, as spec.Point.String writes them,
	// fixed when the plan is made (grid: every point the restrictions
	// allow but the default; random: Samples of them drawn with Seed),
	// each tried on the baseline's source, every hand-written variant's
	// and every edit variant's that passed its checks.
	Tune    string   `json:"tune,omitempty"`
	Samples int      `json:"samples,omitempty"`
	Points  []string `json:"points,omitempty"`
	// Point is the point of the tunable parameters the edits (and the
	// hand-written variants) run at: "" the spec's default, the
	// baseline's own.
	Point string `json:"point,omitempty"`
	// Scope is what a patch may change: "" (the owned functions only,
	// as patches.Make's scope check holds them) or "file" (anywhere in
	// the kernel's file: a hand-written variant that changes code
	// outside --fn gets its patch).
	Scope string `json:"scope,omitempty"`
}

// Scopes are the values of Settings.Scope (and --scope): "fn" is "" in
// the plan.
var Scopes = []string{"fn", "file"}

// OnlyFiles reports whether s sweeps its hand-written variants only.
func (s Settings) OnlyFiles() bool { return len(s.Files) > 0 && len(s.Ops) == 0 && len(s.Refs) == 0 }

// A Budget bounds a sweep's search; zero fields are unbounded. When a
// budget runs out the search stops where it is, the variants explored so
// far are confirmed and decided (a time budget stops confirmation too),
// and the report says which budget ran out.
type Budget struct {
	// Variants is the most variants built and checked.
	Variants int `json:"variants,omitempty"`
	// DeviceSeconds bounds the time the timed samples recorded under the
	// plan add up to (earlier runs of a resumed sweep included).
	DeviceSeconds float64 `json:"device_seconds,omitempty"`
	// WallSeconds bounds the wall time of one run of the sweep (a
	// resumed run starts its own clock).
	WallSeconds float64 `json:"wall_seconds,omitempty"`
}

// ParseBudget parses "variants=12,device=10m,wall=1h" (durations as Go
// writes them, or plain seconds).
func ParseBudget(s string) (Budget, error) {
	var b Budget
	if strings.TrimSpace(s) == "" {
		return b, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return b, fmt.Errorf("budget %q: want KEY=VALUE (variants=N, device=DURATION, wall=DURATION)", part)
		}
		switch k {
		case "variants":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return b, fmt.Errorf("budget variants=%s: want a positive count", v)
			}
			b.Variants = n
		case "device", "wall":
			d, err := parseSeconds(v)
			if err != nil {
				return b, fmt.Errorf("budget %s=%s: %v", k, v, err)
			}
			if k == "device" {
				b.DeviceSeconds = d
			} else {
				b.WallSeconds = d
			}
		default:
			return b, fmt.Errorf("budget %q: unknown key %q (want variants, device or wall)", part, k)
		}
	}
	return b, nil
}

func parseSeconds(v string) (float64, error) {
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return 0, errors.New("want a positive duration")
		}
		return d.Seconds(), nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		return 0, errors.New("want a positive duration (90s, 10m, 2h) or seconds")
	}
	return f, nil
}

// String formats b as ParseBudget reads it; "none" when unbounded.
func (b Budget) String() string {
	var parts []string
	if b.Variants > 0 {
		parts = append(parts, fmt.Sprintf("variants=%d", b.Variants))
	}
	if b.DeviceSeconds > 0 {
		parts = append(parts, "device="+seconds(b.DeviceSeconds))
	}
	if b.WallSeconds > 0 {
		parts = append(parts, "wall="+seconds(b.WallSeconds))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// Validate reports the first thing in p a sweep cannot run.
func (p *Plan) Validate() error {
	bad := func(format string, args ...any) error { return fmt.Errorf("plan: "+format, args...) }
	switch {
	case p.Schema != PlanSchema:
		return bad("schema %q, this metalab runs %q", p.Schema, PlanSchema)
	case p.Kernel == "" || p.Spec == "":
		return bad("no spec or kernel")
	case !isSHA(p.Baseline) || !isSHA(p.SpecSHA256):
		return bad("baseline or spec sha256 missing")
	case len(p.Functions) == 0:
		return bad("no owned function (--fn)")
	case len(p.Cases) == 0:
		return bad("no timed case")
	case !slices.Contains(p.Cases, p.Target):
		return bad("target case %q is not a timed case (%s)", p.Target, strings.Join(p.Cases, ", "))
	case !slices.Contains(p.Cases, p.Explore.Case):
		return bad("explore case %q is not a timed case (%s)", p.Explore.Case, strings.Join(p.Cases, ", "))
	case p.Search.Strategy == "" && p.Search.Tune == "" && len(p.Search.Files) == 0:
		return bad("no strategy: name one over edits (%s) or over parameters (%s)", StrategyNames(OverEdits), StrategyNames(OverParams))
	case p.Search.Strategy == "" && (len(p.Search.Ops) > 0 || len(p.Search.Refs) > 0):
		return bad("operators or refs, and no strategy over edits to search them (%s)", StrategyNames(OverEdits))
	case p.Search.Strategy != "" && LookupStrategy(p.Search.Strategy, OverEdits) == nil:
		return bad("strategy %q over edits (want one of %s)", p.Search.Strategy, StrategyNames(OverEdits))
	case p.Search.Tune != "" && LookupStrategy(p.Search.Tune, OverParams) == nil:
		return bad("strategy %q over parameters (want one of %s)", p.Search.Tune, StrategyNames(OverParams))
	case strategyOf(p.Search.Tune).Samples && p.Search.Samples < 1:
		return bad("random: %d points to draw (want at least one)", p.Search.Samples)
	case p.Search.Choices != "all" && p.Search.Choices != "first":
		return bad("choices %q (want all or first)", p.Search.Choices)
	case strategyOf(p.Search.Strategy).Width && p.Search.Beam < 1:
		return bad("beam width %d", p.Search.Beam)
	case p.Search.MinStep < 0 || p.Search.MinStep >= 1:
		return bad("min step %v is not in [0, 1)", p.Search.MinStep)
	case p.Search.Budget.Variants < 0 || p.Search.Budget.DeviceSeconds < 0 || p.Search.Budget.WallSeconds < 0:
		return bad("negative budget")
	case p.Search.Scope != "" && p.Search.Scope != "file":
		return bad("scope %q (want file, or none for the owned functions)", p.Search.Scope)
	case p.Parity != "" && !parityCanonical(p.Parity):
		return bad("parity %q (want ulp=N or rel=X, as check.ParseParity writes it; bitwise is none)", p.Parity)
	case p.Confirm.Top < 1:
		return bad("confirm top %d: at least one explored variant must be confirmed", p.Confirm.Top)
	case p.RuleSHA256 != p.Rule.Hash():
		return bad("rule_sha256 %s is not the rule's hash %s", p.RuleSHA256, p.Rule.Hash())
	}
	for _, ph := range []struct {
		name string
		p    Phase
	}{{"explore", p.Explore}, {"confirm", p.Confirm}} {
		if ph.p.Pairs < 1 || ph.p.Warmup < 0 || ph.p.MaxReruns < 0 || ph.p.Dispatches < 0 {
			return bad("%s: pairs %d, warm-up %d, re-runs %d, dispatches %d (want at least one pair, and no negative count)",
				ph.name, ph.p.Pairs, ph.p.Warmup, ph.p.MaxReruns, ph.p.Dispatches)
		}
	}
	for _, op := range p.Search.Ops {
		if lookupOp(op) == nil {
			var names []string
			for _, m := range all.Mutations {
				names = append(names, m.Name)
			}
			return bad("unknown operator %q (operators: %s)", op, strings.Join(names, ", "))
		}
	}
	for _, r := range p.Search.Refs {
		if _, err := mutate.ParseSiteRef(r); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
	}
	for _, f := range p.Search.Files {
		if f.Path == "" || !isSHA(f.SHA256) {
			return bad("hand-written variant %q: no path or sha256", f.Path)
		}
	}
	if err := p.Rule.Validate(); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if err := p.screen().Validate(); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if p.Confirm.Pairs < p.Rule.MinPairs {
		return bad("confirm pairs %d are fewer than the rule's min_pairs %d: no confirmation could decide anything", p.Confirm.Pairs, p.Rule.MinPairs)
	}
	return nil
}

// JSON returns the plan's JSON, indented, as plan.json holds it.
func (p *Plan) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("plan json: %w", err)
	}
	return append(b, '\n'), nil
}

// StorePlan returns the plan as the results store keys it.
func (p *Plan) StorePlan() (store.Plan, error) {
	b, err := p.JSON()
	if err != nil {
		return store.Plan{}, err
	}
	return store.Plan{Baseline: p.Baseline, JSON: b}, nil
}

// Hash returns the plan's identity: the results store's hash of its JSON.
func (p *Plan) Hash() (string, error) {
	sp, err := p.StorePlan()
	if err != nil {
		return "", err
	}
	return sp.Hash()
}

// ParsePlan reads a plan from JSON, refusing unknown fields, and
// validates it.
func ParsePlan(data []byte) (*Plan, error) {
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("parse plan: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Diff lists the top-level fields in which a and b differ, as "field: a →
// b", to say why a store refuses a plan.
func Diff(a, b *Plan) []string {
	var ma, mb map[string]json.RawMessage
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	var keys []string
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		if !bytes.Equal(ma[k], mb[k]) {
			out = append(out, fmt.Sprintf("%s: %s → %s", k, short(string(ma[k])), short(string(mb[k]))))
		}
	}
	return out
}

func short(s string) string {
	if s == "" {
		return "(none)"
	}
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func isSHA(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// parityCanonical reports whether s is a tolerance rule as
// check.Parity writes it.
func parityCanonical(s string) bool {
	q, err := check.ParseParity(s)
	return err == nil && !q.Bitwise() && q.String() == s
}

// ParityOf returns the plan's parity rule (bitwise when none).
func (p *Plan) ParityOf() check.Parity {
	q, _ := check.ParseParity(p.Parity)
	return q
}

// RuleText describes the rule in words for reports.
func RuleText(r measure.Rule) string { return ruleText(r, "") }

// PlanRuleText describes p's rule in words, with its parity rule: under
// a tolerance, the bitwise clause reads "within ulp=4 (not bitwise)".
func PlanRuleText(p *Plan) string { return ruleText(p.Rule, p.Parity) }

func ruleText(r measure.Rule, parity string) string {
	var parts []string
	if r.Bitwise && parity != "" {
		parts = append(parts, "outputs within "+parity+" of the baseline's on every case (a tolerance: not bitwise)")
	} else if r.Bitwise {
		parts = append(parts, "bitwise identical on every case")
	}
	parts = append(parts, fmt.Sprintf("median gain ≥ %s at the target case", pctText(r.MinGain)))
	parts = append(parts, fmt.Sprintf("no other case slower by more than %s with %s confidence", pctText(r.MaxRegression), pctText(r.Confidence)))
	if r.Confirmations > 0 {
		parts = append(parts, fmt.Sprintf("confirmed by %d independent runs at the target case", r.Confirmations))
	}
	if r.Control {
		parts = append(parts, fmt.Sprintf("controls before and after, the baseline moving at most %s", pctText(r.MaxDrift)))
	}
	parts = append(parts, fmt.Sprintf("at least %d pairs per measurement", r.MinPairs))
	return strings.Join(parts, "; ")
}

func pctText(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(f*100, 'f', 2, 64), "0"), ".") + "%"
}

// PlanOptions are what a sweep is asked for; NewPlan fills in the rest.
type PlanOptions struct {
	Functions []string
	Macros    Macros
	Backend   string
	// Sets are checked and timed (nil: the spec's default sets);
	// CheckSets are checked only.
	Sets, CheckSets []string
	// Target and ExploreCase name timed cases: "set/name", or any part of
	// one that names it alone ("pos0=30000"). "" means the last timed
	// case, and the target, respectively.
	Target, ExploreCase string
	Path                string // the kernel's path in its repository; "" means the spec's source path
	Search              Settings
	Explore, Confirm    Phase
	TGLimit             int
	NoDetect            bool
	Race, Strict        bool
	Rule                measure.Rule
	// NoVerify turns verification off; VerifyBackend is the verification
	// backend's name ("" the timing backend itself) and VerifySets its
	// case sets (nil: the spec's default sets).
	NoVerify      bool
	VerifyBackend string
	VerifySets    []string
	// HeldOut is the held-out cases per variant's verification: 0 means
	// DefaultHeldOut when the spec declares domains, below 0 none.
	HeldOut int
	// Parity is the parity rule (check.Parity); the zero rule is
	// bitwise.
	Parity check.Parity
	// Screen is the contamination screen; nil the default.
	Screen *measure.Screen
}

// DefaultHeldOut is the held-out cases each variant's verification draws
// when the spec declares domains and PlanOptions.HeldOut is 0.
const DefaultHeldOut = 4

// DefaultExplore and DefaultConfirm are the phases' defaults: exploration
// takes a few pairs at one case to rank variants, confirmation enough
// pairs at every case for the default rule.
var (
	DefaultExplore = Phase{Pairs: 3, Warmup: 1, MaxReruns: 1}
	DefaultConfirm = Phase{Pairs: measure.DefaultPairs, Warmup: 1, MaxReruns: 2, Top: 3}
)

// NewPlan makes the plan of a sweep of the kernel f (the spec's main
// source, parsed with o.Macros) under spec s, whose file holds specBytes;
// readFile reads the spec's sources for their hashes.
func NewPlan(s *spec.Spec, specBytes []byte, f *msl.File, readFile func(string) ([]byte, error), o PlanOptions) (*Plan, error) {
	p := &Plan{
		Schema: PlanSchema, Spec: s.Path, SpecSHA256: sha(specBytes), Kernel: s.Source, Path: o.Path,
		Functions: o.Functions, Macros: o.Macros, Backend: o.Backend, CheckSets: o.CheckSets,
		Explore: o.Explore, Confirm: o.Confirm, TGLimit: o.TGLimit, Checking: !o.NoDetect && !o.NoVerify, Race: o.Race, Strict: o.Strict,
		Search: o.Search, Rule: o.Rule, RuleSHA256: o.Rule.Hash(), Screen: o.Screen,
	}
	if !o.Parity.Bitwise() {
		p.Parity = o.Parity.String()
	}
	if !strategyOf(p.Search.Tune).Samples {
		p.Search.Samples = 0
	}
	p.Search.Points = nil
	if p.Search.Tune != "" {
		pts, err := PlanPoints(s, p.Search.Tune, p.Search.Samples, p.Search.Seed)
		if err != nil {
			return nil, err
		}
		p.Search.Points = pts
	}

	if p.Path == "" {
		p.Path = DefaultPath(s.Source, "")
	}
	point, err := FixedPoint(s, p.Search.Point)
	if err != nil {
		return nil, err
	}
	p.Search.Point = point
	// The edits' barrier proofs hold for the threads of the point they
	// run at.
	gs := s
	if point != "" {
		pt, _ := spec.ParsePoint(point)
		if gs, err = s.At(pt); err != nil {
			return nil, fmt.Errorf("--point %s: %w", point, err)
		}
	}
	geom, err := geometry.Of(gs)
	if err != nil {
		return nil, err
	}
	p.Geometry = geom
	if p.TGLimit == 0 {
		p.TGLimit = check.DefaultTGLimit
	}
	var seen []string
	for _, st := range s.Stages {
		if slices.Contains(seen, st.Source) {
			continue
		}
		seen = append(seen, st.Source)
		text, err := readFile(st.Source)
		if err != nil {
			return nil, fmt.Errorf("read source: %w", err)
		}
		p.Sources = append(p.Sources, Source{Path: st.Source, SHA256: sha(text)})
		if st.Source == s.Source {
			p.Baseline = sha(text)
			if !bytes.Equal(text, f.Src) {
				return nil, fmt.Errorf("the kernel parsed for sites is not the spec's source %s as it is now", s.Source)
			}
		}
	}
	if p.Baseline == "" {
		return nil, fmt.Errorf("no stage of %s compiles its source %s", s.Path, s.Source)
	}
	p.Sets = o.Sets
	if len(p.Sets) == 0 {
		p.Sets = s.DefaultSets()
	}
	timed, err := s.Cases(p.Sets...)
	if err != nil {
		return nil, err
	}
	for _, c := range timed {
		p.Cases = append(p.Cases, c.Set+"/"+c.Name)
	}
	p.Verify = &Verification{Off: !p.Checking}
	if p.Verify.Off {
		p.Checked = append(p.Checked, p.Cases...)
	} else {
		p.Verify.Backend = o.VerifyBackend
		p.Verify.Sets = o.VerifySets
		switch {
		case o.HeldOut > 0 && s.HasDomains():
			p.Verify.HeldOut = o.HeldOut
		case o.HeldOut == 0 && s.HasDomains():
			p.Verify.HeldOut = DefaultHeldOut
		}
		if len(p.Verify.Sets) == 0 {
			p.Verify.Sets = s.DefaultSets()
		}
		for _, set := range p.CheckSets {
			if !slices.Contains(p.Verify.Sets, set) {
				p.Verify.Sets = append(p.Verify.Sets, set)
			}
		}
		checked, err := s.Cases(p.Verify.Sets...)
		if err != nil {
			return nil, err
		}
		for _, c := range checked {
			if name := c.Set + "/" + c.Name; !slices.Contains(p.Checked, name) {
				p.Checked = append(p.Checked, name)
			}
		}
		if len(p.Checked) == 0 {
			return nil, fmt.Errorf("the verification sets %s have no case", strings.Join(p.Verify.Sets, ", "))
		}
	}
	if len(p.Cases) == 0 {
		return nil, fmt.Errorf("the sets %s have no case", strings.Join(p.Sets, ", "))
	}
	p.Target = p.Cases[len(p.Cases)-1]
	if o.Target != "" {
		if p.Target, err = resolveCase(p.Cases, o.Target, "--target"); err != nil {
			return nil, err
		}
	}
	p.Explore.Case = p.Target
	if o.ExploreCase != "" {
		if p.Explore.Case, err = resolveCase(p.Cases, o.ExploreCase, "--explore-case"); err != nil {
			return nil, err
		}
	}
	for _, st := range s.Stages {
		if st.Source != s.Source {
			continue
		}
		if fn, _, err := f.Entry(st.Entry); err == nil && (slices.Contains(o.Functions, fn.Name) || slices.Contains(o.Functions, st.Entry)) {
			p.TimedStages = append(p.TimedStages, st.Entry)
		}
	}
	if len(p.TimedStages) == 0 {
		for _, st := range s.Stages {
			p.TimedStages = append(p.TimedStages, st.Entry)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// DefaultPath is the path patches label the kernel at source with: its
// path inside repo when given, else the path as given when it is relative
// and inside the working directory, else its base name.
func DefaultPath(source, repo string) string {
	if repo != "" {
		if ra, err := filepath.Abs(repo); err == nil {
			if sa, err := filepath.Abs(source); err == nil {
				if rel, err := filepath.Rel(ra, sa); err == nil && filepath.IsLocal(rel) {
					return filepath.ToSlash(rel)
				}
			}
		}
	}
	if filepath.IsLocal(source) {
		return filepath.ToSlash(filepath.Clean(source))
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, source); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(source)
}

// resolveCase returns the case of cases that name is, or names alone: the
// full "set/name", or a part of exactly one case.
func resolveCase(cases []string, name, flag string) (string, error) {
	if slices.Contains(cases, name) {
		return name, nil
	}
	var hits []string
	for _, c := range cases {
		if strings.Contains(c, name) {
			hits = append(hits, c)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return "", fmt.Errorf("%s %q is none of the timed cases (%s)", flag, name, strings.Join(cases, "; "))
	}
	return "", fmt.Errorf("%s %q names %d cases (%s): give more of one", flag, name, len(hits), strings.Join(hits, "; "))
}

// SHA256 returns the hex sha256 of b, as plans record sources.
func SHA256(b []byte) string { return sha(b) }

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
