package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A Key says what a result is about. The plan and the baseline are the
// store's own (every row records them too).
type Key struct {
	Variant string `json:"variant"`         // hex sha256 of the variant's source; Store.Baseline() for the baseline and controls
	Backend string `json:"backend"`         // "cpu", "metal", ...
	Device  string `json:"device"`          // the device as the backend names it
	Case    string `json:"case,omitempty"`  // spec case; "" for a compile and for a decision over all cases
	Phase   string `json:"phase,omitempty"` // sweep phase of a measurement or decision ("explore", "confirm"); "" for compiles and checks
}

func (k Key) String() string {
	s := fmt.Sprintf("variant %s on %s/%s", short(k.Variant), k.Backend, k.Device)
	if k.Case != "" {
		s += " case " + k.Case
	}
	if k.Phase != "" {
		s += " phase " + k.Phase
	}
	return s
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func (k Key) validate(what string, needCase, allowPhase bool) error {
	switch {
	case !isSHA256(k.Variant):
		return fmt.Errorf("%s: variant %q is not a hex sha256", what, k.Variant)
	case k.Backend == "":
		return fmt.Errorf("%s %s: no backend", what, k)
	case needCase && k.Case == "":
		return fmt.Errorf("%s %s: no case", what, k)
	case !allowPhase && k.Phase != "":
		return fmt.Errorf("%s %s: a %s has no phase", what, k, what)
	}
	return nil
}

// A Variant is a variant's identity as the sweep built it.
type Variant struct {
	SHA256 string   `json:"sha256"` // hex sha256 of its source (of its source's and its point's, for a point of tunable parameters)
	Name   string   `json:"name"`   // deterministic name (variants.Variant.Name; "@NSG=2" ends a point's)
	Refs   []string `json:"refs"`   // its site refs, ID=CHOICE, sorted as variants.Build sorted them; "file:PATH" for a hand-written variant; "point:NSG=2" last for a point
}

// A Compile is the outcome of compiling one variant on one backend.
type Compile struct {
	Status  string    `json:"status"`            // "ok", or check's status for the failure ("compile-error", "refused", ...)
	Message string    `json:"message,omitempty"` // one line
	Log     string    `json:"log,omitempty"`     // compiler output, as long as it is
	TGBytes int64     `json:"tg_bytes"`          // static threadgroup memory in bytes; -1 unknown
	Created time.Time `json:"created"`           // set by the store
}

// A Check is the outcome of checking one variant at one case: bitwise
// parity and what the checking mode and the race probe found.
type Check struct {
	Status   string    `json:"status"`            // check.Status: "pass", "fail-parity", "fail-race", ...
	Message  string    `json:"message,omitempty"` // first difference or finding, one line or a few
	Findings int       `json:"findings"`          // findings of the checking mode (warnings included)
	Created  time.Time `json:"created"`           // set by the store
}

// A Confirmation is a variant's bytes on the timing backend compared
// with the baseline's at one timed case: before the variant is timed
// there (Key.Phase ""), or after a measurement, from its last timed
// sample (Key.Phase the measurement's, Measurement its id).
type Confirmation struct {
	Status      string    `json:"status"`                // "pass", check's status of the failure, or "fail-after-timing"
	Message     string    `json:"message,omitempty"`     // the first difference or failure, one line
	Measurement string    `json:"measurement,omitempty"` // the measurement it follows; "" before timing
	Created     time.Time `json:"created"`               // set by the store
}

// A Side is the source a timing sample ran: A the baseline, B the variant
// (the baseline again in a control).
type Side string

// The two sides of a pair.
const (
	SideA Side = "A"
	SideB Side = "B"
)

// A Sample is one raw timing: one side of one pair.
type Sample struct {
	Pair  int       `json:"pair"`  // pair index, from 0
	Side  Side      `json:"side"`  // A (baseline) or B (variant)
	Order int       `json:"order"` // 0 if this side ran first in its pair, 1 if second
	NS    int64     `json:"ns"`    // duration in nanoseconds
	Clock string    `json:"clock"` // what measured it: "gpu" (command buffer start/end), "cpu-monotonic", ...
	Taken time.Time `json:"taken"` // set by the store: when it was written
}

// A Summary is a measurement's statistics as the measuring code computed
// them; writing it completes the measurement.
type Summary struct {
	Pairs        int             `json:"pairs"`        // pairs the statistics use
	MedianA      float64         `json:"median_a_ns"`  // median of side A, ns
	MedianB      float64         `json:"median_b_ns"`  // median of side B, ns
	Ratio        float64         `json:"ratio"`        // median of the per-pair ratios B/A
	CILow        float64         `json:"ci_low"`       // confidence interval of Ratio
	CIHigh       float64         `json:"ci_high"`      //
	CILevel      float64         `json:"ci_level"`     // e.g. 0.95
	RatioMin     float64         `json:"ratio_min"`    // smallest per-pair ratio: the spread
	RatioMax     float64         `json:"ratio_max"`    // largest per-pair ratio
	Contaminated bool            `json:"contaminated"` // the samples show outside interference
	Flags        []string        `json:"flags"`        // contamination flags, with what triggered them
	Note         string          `json:"note"`         // optional
	Detail       json.RawMessage `json:"detail"`       // optional: the measuring code's own summary, stored verbatim
	Created      time.Time       `json:"created"`      // set by the store
}

// A Measurement is one run of paired timing of Key.
type Measurement struct {
	ID      string    `json:"id"`
	Key     Key       `json:"key"`
	Started time.Time `json:"started"`
	Summary *Summary  `json:"summary"` // nil while incomplete
}

// A Decision is the verdict of the plan's rule on a variant.
type Decision struct {
	Verdict string          `json:"verdict"` // "retain", "reject" or "inconclusive"
	Reasons []string        `json:"reasons"` // why, one line each
	Rule    string          `json:"rule"`    // the rule as declared in the plan
	Detail  json.RawMessage `json:"detail"`  // optional: the deciding code's own record, verbatim
	Created time.Time       `json:"created"` // set by the store
}

// write runs f in one transaction: a result is committed whole or not at all.
func (s *Store) write(ctx context.Context, what string, f func(tx *sql.Tx) error) error {
	if s.readOnly {
		return fmt.Errorf("%s: %s: store is open read-only", s.path, what)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", s.path, what, err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return fmt.Errorf("%s: %s: %w", s.path, what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %s: %w", s.path, what, err)
	}
	return nil
}

func isCode(err error, code int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == code
}

// insertErr turns constraint failures into the store's errors.
func insertErr(err error, k Key) error {
	switch {
	case err == nil:
		return nil
	case isCode(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY):
		return fmt.Errorf("%s: %w", k, ErrExists)
	case isCode(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY):
		return fmt.Errorf("%s: %w: record it with PutVariant first", k, ErrUnknownVariant)
	}
	return err
}

// PutVariant records a variant's identity. Recording the same variant
// again is a no-op; the same sha256 under another name or refs is an error.
func (s *Store) PutVariant(ctx context.Context, v Variant) error {
	if !isSHA256(v.SHA256) {
		return fmt.Errorf("put variant %q: sha256 %q is not a hex sha256", v.Name, v.SHA256)
	}
	if v.Name == "" {
		return fmt.Errorf("put variant %s: no name", short(v.SHA256))
	}
	refs := v.Refs
	if refs == nil {
		refs = []string{}
	}
	rj, _ := json.Marshal(refs)
	return s.write(ctx, "put variant "+v.Name, func(tx *sql.Tx) error {
		var name, have string
		err := tx.QueryRowContext(ctx, "SELECT name, refs FROM variants WHERE plan_hash = ? AND sha256 = ?", s.plan, v.SHA256).Scan(&name, &have)
		switch {
		case err == sql.ErrNoRows:
			_, err = tx.ExecContext(ctx, "INSERT INTO variants (plan_hash, sha256, name, refs, created) VALUES (?, ?, ?, ?, ?)",
				s.plan, v.SHA256, v.Name, string(rj), s.stamp())
			return err
		case err != nil:
			return err
		case name != v.Name || have != string(rj):
			return fmt.Errorf("sha256 %s is already recorded as %s %s", short(v.SHA256), name, have)
		}
		return nil
	})
}

// Variant returns the recorded variant with the given sha256.
func (s *Store) Variant(ctx context.Context, sha string) (Variant, bool, error) {
	var v Variant
	var refs string
	err := s.db.QueryRowContext(ctx, "SELECT sha256, name, refs FROM variants WHERE plan_hash = ? AND sha256 = ?", s.plan, sha).
		Scan(&v.SHA256, &v.Name, &refs)
	if err == sql.ErrNoRows {
		return Variant{}, false, nil
	}
	if err != nil {
		return Variant{}, false, fmt.Errorf("%s: variant %s: %w", s.path, short(sha), err)
	}
	if err := json.Unmarshal([]byte(refs), &v.Refs); err != nil {
		return Variant{}, false, fmt.Errorf("%s: variant %s refs: %w", s.path, short(sha), err)
	}
	return v, true, nil
}

// PutCompile records the outcome of compiling k.Variant on k's backend
// and device (k.Case and k.Phase must be empty). ErrExists if recorded.
func (s *Store) PutCompile(ctx context.Context, k Key, c Compile) error {
	if err := k.validate("compile", false, false); err != nil {
		return err
	}
	if k.Case != "" {
		return fmt.Errorf("compile %s: a compile has no case", k)
	}
	if c.Status == "" {
		return fmt.Errorf("compile %s: no status", k)
	}
	return s.write(ctx, "put compile", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO compiles (plan_hash, baseline, variant, backend, device, status, message, log, tg_bytes, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.plan, s.baseline, k.Variant, k.Backend, k.Device, c.Status, c.Message, c.Log, c.TGBytes, s.stamp())
		return insertErr(err, k)
	})
}

// Compile returns the recorded compile of k, if any.
func (s *Store) Compile(ctx context.Context, k Key) (Compile, bool, error) {
	var c Compile
	var created string
	err := s.db.QueryRowContext(ctx, `SELECT status, message, log, tg_bytes, created FROM compiles
		WHERE plan_hash = ? AND variant = ? AND backend = ? AND device = ?`, s.plan, k.Variant, k.Backend, k.Device).
		Scan(&c.Status, &c.Message, &c.Log, &c.TGBytes, &created)
	if err == sql.ErrNoRows {
		return Compile{}, false, nil
	}
	if err != nil {
		return Compile{}, false, fmt.Errorf("%s: compile %s: %w", s.path, k, err)
	}
	c.Created = parseStamp(created)
	return c, true, nil
}

// PutCheck records the outcome of checking k.Variant at k.Case (k.Phase
// must be empty). ErrExists if recorded.
func (s *Store) PutCheck(ctx context.Context, k Key, c Check) error {
	if err := k.validate("check", true, false); err != nil {
		return err
	}
	if c.Status == "" {
		return fmt.Errorf("check %s: no status", k)
	}
	if c.Findings < 0 {
		return fmt.Errorf("check %s: %d findings", k, c.Findings)
	}
	return s.write(ctx, "put check", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO checks (plan_hash, baseline, variant, backend, device, case_name, status, message, findings, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.plan, s.baseline, k.Variant, k.Backend, k.Device, k.Case, c.Status, c.Message, c.Findings, s.stamp())
		return insertErr(err, k)
	})
}

// HasCheck reports whether a check of k is recorded.
func (s *Store) HasCheck(ctx context.Context, k Key) (bool, error) {
	_, ok, err := s.Check(ctx, k)
	return ok, err
}

// Check returns the recorded check of k, if any.
func (s *Store) Check(ctx context.Context, k Key) (Check, bool, error) {
	var c Check
	var created string
	err := s.db.QueryRowContext(ctx, `SELECT status, message, findings, created FROM checks
		WHERE plan_hash = ? AND variant = ? AND backend = ? AND device = ? AND case_name = ?`,
		s.plan, k.Variant, k.Backend, k.Device, k.Case).Scan(&c.Status, &c.Message, &c.Findings, &created)
	if err == sql.ErrNoRows {
		return Check{}, false, nil
	}
	if err != nil {
		return Check{}, false, fmt.Errorf("%s: check %s: %w", s.path, k, err)
	}
	c.Created = parseStamp(created)
	return c, true, nil
}

// PutConfirmation records the confirmation of k.Variant at k.Case before
// it is timed there (k.Phase must be empty; the check after a measurement
// is written with its summary, PutSummaryAfter). ErrExists if recorded.
func (s *Store) PutConfirmation(ctx context.Context, k Key, c Confirmation) error {
	if err := k.validate("confirmation", true, false); err != nil {
		return err
	}
	if c.Status == "" {
		return fmt.Errorf("confirmation %s: no status", k)
	}
	if s.schema < 2 {
		return fmt.Errorf("confirmation %s: the store's schema version %d has no confirmations", k, s.schema)
	}
	return s.write(ctx, "put confirmation", func(tx *sql.Tx) error {
		return insertConfirmation(ctx, tx, s, k, "", c)
	})
}

func insertConfirmation(ctx context.Context, tx *sql.Tx, s *Store, k Key, id string, c Confirmation) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO confirmations (plan_hash, baseline, variant, backend, device, case_name, phase, measurement, status, message, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.plan, s.baseline, k.Variant, k.Backend, k.Device, k.Case, k.Phase, id, c.Status, c.Message, s.stamp())
	return insertErr(err, k)
}

// Confirmation returns the recorded confirmation of k before timing
// (k.Phase ""), if any. A store of schema version 1 (written before
// confirmations were kept) has none.
func (s *Store) Confirmation(ctx context.Context, k Key) (Confirmation, bool, error) {
	cs, err := s.confirmations(ctx, k)
	if err != nil || len(cs) == 0 {
		return Confirmation{}, false, err
	}
	return cs[0], true, nil
}

// AfterTiming returns the checks after the complete measurements of k
// (k.Phase a measurement's phase), one per measurement, oldest first.
func (s *Store) AfterTiming(ctx context.Context, k Key) ([]Confirmation, error) {
	if k.Phase == "" {
		return nil, fmt.Errorf("after timing %s: no phase", k)
	}
	return s.confirmations(ctx, k)
}

func (s *Store) confirmations(ctx context.Context, k Key) ([]Confirmation, error) {
	if s.schema < 2 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT status, message, measurement, created FROM confirmations
		WHERE plan_hash = ? AND variant = ? AND backend = ? AND device = ? AND case_name = ? AND phase = ? ORDER BY created, measurement`,
		s.plan, k.Variant, k.Backend, k.Device, k.Case, k.Phase)
	if err != nil {
		return nil, fmt.Errorf("%s: confirmation %s: %w", s.path, k, err)
	}
	defer rows.Close()
	var out []Confirmation
	for rows.Next() {
		var c Confirmation
		var created string
		if err := rows.Scan(&c.Status, &c.Message, &c.Measurement, &created); err != nil {
			return nil, fmt.Errorf("%s: confirmation %s: %w", s.path, k, err)
		}
		c.Created = parseStamp(created)
		out = append(out, c)
	}
	return out, rows.Err()
}

// Begin starts a measurement of k (k.Case is required) and returns its
// id. Any incomplete measurement of the same key (samples written, no
// summary: the sweep was interrupted) is deleted with its samples in the
// same transaction: an interrupted measurement is redone from scratch,
// never continued, so that its pairs all come from one run. Complete
// measurements are kept; a sweep that wants one per key asks Measurements
// first.
func (s *Store) Begin(ctx context.Context, k Key) (string, error) {
	if err := k.validate("measurement", true, true); err != nil {
		return "", err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("measurement id: %w", err)
	}
	id := hex.EncodeToString(b[:])
	err := s.write(ctx, "begin measurement", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM measurements WHERE plan_hash = ? AND variant = ? AND backend = ? AND device = ?
			AND case_name = ? AND phase = ? AND id NOT IN (SELECT measurement FROM summaries)`,
			s.plan, k.Variant, k.Backend, k.Device, k.Case, k.Phase); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO measurements (id, plan_hash, baseline, variant, backend, device, case_name, phase, started)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, s.plan, s.baseline, k.Variant, k.Backend, k.Device, k.Case, k.Phase, s.stamp())
		return insertErr(err, k)
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// PutSamples records samples of the incomplete measurement id in one
// transaction; a sweep writes each pair as it is timed. A sample already
// recorded (same pair and side) is ErrExists, and nothing is written.
func (s *Store) PutSamples(ctx context.Context, id string, samples ...Sample) error {
	for _, x := range samples {
		switch {
		case x.Pair < 0:
			return fmt.Errorf("sample of %s: pair %d", id, x.Pair)
		case x.Side != SideA && x.Side != SideB:
			return fmt.Errorf("sample of %s pair %d: side %q, want A or B", id, x.Pair, x.Side)
		case x.Order != 0 && x.Order != 1:
			return fmt.Errorf("sample of %s pair %d: order %d, want 0 or 1", id, x.Pair, x.Order)
		case x.NS < 0:
			return fmt.Errorf("sample of %s pair %d: %d ns", id, x.Pair, x.NS)
		case x.Clock == "":
			return fmt.Errorf("sample of %s pair %d: no clock", id, x.Pair)
		}
	}
	return s.write(ctx, "put samples", func(tx *sql.Tx) error {
		if err := incomplete(ctx, tx, id); err != nil {
			return err
		}
		now := s.stamp()
		for _, x := range samples {
			_, err := tx.ExecContext(ctx, "INSERT INTO samples (measurement, pair, side, ord, ns, clock, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
				id, x.Pair, string(x.Side), x.Order, x.NS, x.Clock, now)
			if isCode(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
				return fmt.Errorf("measurement %s pair %d side %s: %w", id, x.Pair, x.Side, ErrExists)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// incomplete checks that measurement id exists and has no summary.
func incomplete(ctx context.Context, tx *sql.Tx, id string) error {
	var n, done int
	err := tx.QueryRowContext(ctx, `SELECT count(*), (SELECT count(*) FROM summaries WHERE measurement = ?) FROM measurements WHERE id = ?`, id, id).
		Scan(&n, &done)
	switch {
	case err != nil:
		return err
	case n == 0:
		return fmt.Errorf("measurement %s: %w", id, ErrNoMeasurement)
	case done > 0:
		return fmt.Errorf("measurement %s: %w", id, ErrComplete)
	}
	return nil
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// PutSummary completes measurement id with its statistics.
func (s *Store) PutSummary(ctx context.Context, id string, m Summary) error {
	return s.putSummary(ctx, id, m, nil)
}

// PutSummaryAfter completes measurement id with its statistics and the
// check of its last timed sample's outputs, in one transaction: a
// measurement is never complete without the check that followed it.
func (s *Store) PutSummaryAfter(ctx context.Context, id string, m Summary, after Confirmation) error {
	if after.Status == "" {
		return fmt.Errorf("summary of %s: the check after timing has no status", id)
	}
	return s.putSummary(ctx, id, m, &after)
}

func (s *Store) putSummary(ctx context.Context, id string, m Summary, after *Confirmation) error {
	if !finite(m.MedianA, m.MedianB, m.Ratio, m.CILow, m.CIHigh, m.CILevel, m.RatioMin, m.RatioMax) {
		return fmt.Errorf("summary of %s: a statistic is NaN or infinite", id)
	}
	if m.Pairs < 0 {
		return fmt.Errorf("summary of %s: %d pairs", id, m.Pairs)
	}
	flags := m.Flags
	if flags == nil {
		flags = []string{}
	}
	fj, _ := json.Marshal(flags)
	detail, err := rawJSON(m.Detail)
	if err != nil {
		return fmt.Errorf("summary of %s: detail: %w", id, err)
	}
	return s.write(ctx, "put summary", func(tx *sql.Tx) error {
		if err := incomplete(ctx, tx, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO summaries (measurement, pairs, median_a_ns, median_b_ns, ratio, ci_low, ci_high, ci_level,
			ratio_min, ratio_max, contaminated, flags, note, detail, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, m.Pairs, m.MedianA, m.MedianB, m.Ratio, m.CILow, m.CIHigh, m.CILevel, m.RatioMin, m.RatioMax,
			m.Contaminated, string(fj), m.Note, detail, s.stamp())
		if err != nil || after == nil {
			return err
		}
		var k Key
		if err := tx.QueryRowContext(ctx, "SELECT variant, backend, device, case_name, phase FROM measurements WHERE id = ?", id).
			Scan(&k.Variant, &k.Backend, &k.Device, &k.Case, &k.Phase); err != nil {
			return err
		}
		return insertConfirmation(ctx, tx, s, k, id, *after)
	})
}

func rawJSON(b json.RawMessage) (string, error) {
	if len(strings.TrimSpace(string(b))) == 0 {
		return "null", nil
	}
	c, err := compactJSON(b)
	if err != nil {
		return "", err
	}
	return string(c), nil
}

const measurementCols = `m.id, m.variant, m.backend, m.device, m.case_name, m.phase, m.started,
	s.pairs, s.median_a_ns, s.median_b_ns, s.ratio, s.ci_low, s.ci_high, s.ci_level, s.ratio_min, s.ratio_max,
	s.contaminated, s.flags, s.note, s.detail, s.created`

type scanner interface{ Scan(...any) error }

// scanMeasurement reads measurementCols; the summary columns may be NULL
// (a LEFT JOIN of an incomplete measurement).
func scanMeasurement(r scanner) (Measurement, error) {
	var m Measurement
	var started string
	var pairs sql.NullInt64
	var ma, mb, ratio, lo, hi, level, rmin, rmax sql.NullFloat64
	var cont sql.NullBool
	var flags, note, detail, created sql.NullString
	if err := r.Scan(&m.ID, &m.Key.Variant, &m.Key.Backend, &m.Key.Device, &m.Key.Case, &m.Key.Phase, &started,
		&pairs, &ma, &mb, &ratio, &lo, &hi, &level, &rmin, &rmax, &cont, &flags, &note, &detail, &created); err != nil {
		return Measurement{}, err
	}
	m.Started = parseStamp(started)
	if pairs.Valid {
		sm := &Summary{Pairs: int(pairs.Int64), MedianA: ma.Float64, MedianB: mb.Float64, Ratio: ratio.Float64,
			CILow: lo.Float64, CIHigh: hi.Float64, CILevel: level.Float64, RatioMin: rmin.Float64, RatioMax: rmax.Float64,
			Contaminated: cont.Bool, Note: note.String, Created: parseStamp(created.String)}
		if err := json.Unmarshal([]byte(flags.String), &sm.Flags); err != nil {
			return Measurement{}, fmt.Errorf("flags: %w", err)
		}
		if detail.String != "null" {
			sm.Detail = json.RawMessage(detail.String)
		}
		m.Summary = sm
	}
	return m, nil
}

// Measurements returns the complete measurements of k, oldest first.
func (s *Store) Measurements(ctx context.Context, k Key) ([]Measurement, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+measurementCols+` FROM measurements m JOIN summaries s ON s.measurement = m.id
		WHERE m.plan_hash = ? AND m.variant = ? AND m.backend = ? AND m.device = ? AND m.case_name = ? AND m.phase = ?
		ORDER BY m.started, m.id`, s.plan, k.Variant, k.Backend, k.Device, k.Case, k.Phase)
	if err != nil {
		return nil, fmt.Errorf("%s: measurements of %s: %w", s.path, k, err)
	}
	defer rows.Close()
	var out []Measurement
	for rows.Next() {
		m, err := scanMeasurement(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: measurements of %s: %w", s.path, k, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: measurements of %s: %w", s.path, k, err)
	}
	return out, nil
}

// Samples returns the samples of measurement id by pair, A before B.
func (s *Store) Samples(ctx context.Context, id string) ([]Sample, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT pair, side, ord, ns, clock, created FROM samples WHERE measurement = ? ORDER BY pair, side", id)
	if err != nil {
		return nil, fmt.Errorf("%s: samples of %s: %w", s.path, id, err)
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		var x Sample
		var side, taken string
		if err := rows.Scan(&x.Pair, &side, &x.Order, &x.NS, &x.Clock, &taken); err != nil {
			return nil, fmt.Errorf("%s: samples of %s: %w", s.path, id, err)
		}
		x.Side, x.Taken = Side(side), parseStamp(taken)
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: samples of %s: %w", s.path, id, err)
	}
	return out, nil
}

// PutDecision records the rule's verdict on k.Variant (k.Case is
// usually empty: a decision over all cases). ErrExists if recorded.
func (s *Store) PutDecision(ctx context.Context, k Key, d Decision) error {
	if err := k.validate("decision", false, true); err != nil {
		return err
	}
	if d.Verdict == "" {
		return fmt.Errorf("decision %s: no verdict", k)
	}
	reasons := d.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	rj, _ := json.Marshal(reasons)
	detail, err := rawJSON(d.Detail)
	if err != nil {
		return fmt.Errorf("decision %s: detail: %w", k, err)
	}
	return s.write(ctx, "put decision", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO decisions (plan_hash, baseline, variant, backend, device, case_name, phase, verdict, reasons, rule, detail, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.plan, s.baseline, k.Variant, k.Backend, k.Device, k.Case, k.Phase, d.Verdict, string(rj), d.Rule, detail, s.stamp())
		return insertErr(err, k)
	})
}

// Decision returns the recorded decision on k, if any.
func (s *Store) Decision(ctx context.Context, k Key) (Decision, bool, error) {
	var d Decision
	var reasons, detail, created string
	err := s.db.QueryRowContext(ctx, `SELECT verdict, reasons, rule, detail, created FROM decisions
		WHERE plan_hash = ? AND variant = ? AND backend = ? AND device = ? AND case_name = ? AND phase = ?`,
		s.plan, k.Variant, k.Backend, k.Device, k.Case, k.Phase).Scan(&d.Verdict, &reasons, &d.Rule, &detail, &created)
	if err == sql.ErrNoRows {
		return Decision{}, false, nil
	}
	if err != nil {
		return Decision{}, false, fmt.Errorf("%s: decision %s: %w", s.path, k, err)
	}
	if err := json.Unmarshal([]byte(reasons), &d.Reasons); err != nil {
		return Decision{}, false, fmt.Errorf("%s: decision %s: %w", s.path, k, err)
	}
	if detail != "null" {
		d.Detail = json.RawMessage(detail)
	}
	d.Created = parseStamp(created)
	return d, true, nil
}
