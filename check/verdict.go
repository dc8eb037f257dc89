package check

// The two-part verdict. A variant is verified on the verification backend
// in the checking mode (bitwise parity with the baseline, races,
// uninitialised reads, bounds, on the verification cases) and confirmed on
// the run's backend, in the plain build that a sweep times (bitwise parity
// on every case). It passes when both parts pass; with Options.NoVerify it
// passes on confirmation alone and every result says it is not verified.

// Part names a half of the verdict, for Result.Stopped.
const (
	PartBuild        = "build"        // compile, refusal, threadgroup memory limit, spec fit: before either part
	PartVerification = "verification" // the checking-mode runs on the verification backend
	PartConfirmation = "confirmation" // the plain runs on the run's backend
)

// Build names the kind of program a part runs, for Part.Build.
const (
	BuildChecking = "checking"
	BuildPlain    = "plain"
)

// A Part is one half of a verdict: where it ran, how, and its outcome.
type Part struct {
	Backend string `json:"backend"` // "cpu", "cuda", ...; "" when the part did not run
	Device  string `json:"device,omitempty"`
	Build   string `json:"build,omitempty"` // BuildChecking or BuildPlain
	// Status is Pass, a failure, NotVerified (verification was turned
	// off, or no backend could verify) or NotRun (a step before this part
	// failed).
	Status   Status       `json:"status"`
	Msg      string       `json:"msg,omitempty"`
	Mismatch *Mismatch    `json:"mismatch,omitempty"` // the part's first difference
	Log      string       `json:"log,omitempty"`      // the runner's output of a failure
	Sets     []string     `json:"sets,omitempty"`
	Cases    []CaseResult `json:"cases,omitempty"`
	Seconds  float64      `json:"seconds"`
}

// Passed reports whether the part ran and passed.
func (p *Part) Passed() bool { return p.Status == Pass }

// BaselineFindings returns the baseline's own findings, once per source
// site (the control's Result.BaselineFindings).
func (s *Session) BaselineFindings() []Finding { return s.control.BaselineFindings }

// Header returns the fields every report of the session shares: backends,
// sets, whether variants are verified, notes. Control and Variants are
// nil.
func (s *Session) Header() Report { return s.report }
