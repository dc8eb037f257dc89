package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// A Stage names a kind of result.
type Stage string

// The stages, in the order Results lists them.
const (
	StageVariant  Stage = "variant"  // a variant's identity
	StageCompile  Stage = "compile"  // a compile
	StageCheck    Stage = "check"    // a check at one case
	StageConfirm  Stage = "confirm"  // a confirmation on the timing backend at one case, before timing or after a measurement
	StageSample   Stage = "sample"   // one raw timing sample of a complete measurement
	StageSummary  Stage = "summary"  // a complete measurement of a variant
	StageControl  Stage = "control"  // a complete measurement of the baseline against itself
	StageDecision Stage = "decision" // a verdict of the rule
)

// Stages lists every stage in the order Results returns them.
var Stages = []Stage{StageVariant, StageCompile, StageCheck, StageConfirm, StageSample, StageSummary, StageControl, StageDecision}

// A Query selects results; zero fields select everything.
//
// "Which variants passed parity at pos0=30000" is
// Query{Stage: StageCheck, Case: "pos0=30000", Status: "pass"}; "all
// timings of variant X" is Query{Stage: StageSample, Variant: X}; "the
// decisions" is Query{Stage: StageDecision}.
type Query struct {
	Stage   Stage  // one stage, or "" for all
	Variant string // a variant's sha256, a prefix of it (at least 6 hex digits) or its name
	Case    string
	Phase   string
	Backend string
	Device  string
	// Status is a compile or check status, a decision's verdict, or, for
	// summaries and controls, "contaminated" or "clean". Stages without a
	// status (variant, sample) match no status but "".
	Status string
	Limit  int // at most this many rows; 0 means no limit
}

// A Row is one result, ready for encoding/json: the key and the variant's
// identity, then the one field of its stage.
type Row struct {
	Stage Stage `json:"stage"`
	Key
	Name        string        `json:"name"`                  // the variant's name ("baseline" for the baseline)
	Refs        []string      `json:"refs,omitempty"`        // its site refs
	Status      string        `json:"status,omitempty"`      // as Query.Status
	Measurement string        `json:"measurement,omitempty"` // samples, summaries and controls: the measurement id
	Compile     *Compile      `json:"compile,omitempty"`
	Check       *Check        `json:"check,omitempty"`
	Confirm     *Confirmation `json:"confirmation,omitempty"`
	Sample      *Sample       `json:"sample,omitempty"`
	Summary     *Summary      `json:"summary,omitempty"` // summaries and controls
	Decision    *Decision     `json:"decision,omitempty"`
}

func validStage(st Stage) bool {
	for _, s := range Stages {
		if s == st {
			return true
		}
	}
	return false
}

// filter builds the WHERE clause shared by every stage: alias is the
// table holding the key columns, v the variants table.
type filter struct {
	where []string
	args  []any
}

func (f *filter) add(cond string, args ...any) {
	f.where = append(f.where, cond)
	f.args = append(f.args, args...)
}

func (f *filter) sql() string {
	if len(f.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.where, " AND ")
}

func (s *Store) keyFilter(q Query, t string, hasCase, hasPhase, hasBackend bool) (*filter, bool) {
	f := &filter{}
	f.add(t+".plan_hash = ?", s.plan)
	if q.Variant != "" {
		if isHex(q.Variant) && len(q.Variant) >= 6 {
			f.add("(v.sha256 LIKE ? OR v.name = ?)", strings.ToLower(q.Variant)+"%", q.Variant)
		} else {
			f.add("v.name = ?", q.Variant)
		}
	}
	for _, c := range []struct {
		has        bool
		col, value string
	}{{hasCase, "case_name", q.Case}, {hasPhase, "phase", q.Phase}, {hasBackend, "backend", q.Backend}, {hasBackend, "device", q.Device}} {
		if c.value == "" {
			continue
		}
		if !c.has {
			return f, false
		}
		f.add(t+"."+c.col+" = ?", c.value)
	}
	return f, true
}

func isHex(s string) bool {
	for _, c := range strings.ToLower(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// Results returns the results q selects, by stage in the order of Stages,
// then by variant name, backend, device, case, phase and pair.
func (s *Store) Results(ctx context.Context, q Query) ([]Row, error) {
	if q.Stage != "" && !validStage(q.Stage) {
		return nil, fmt.Errorf("query: unknown stage %q (want one of %v)", q.Stage, Stages)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("query: limit %d", q.Limit)
	}
	var out []Row
	for _, st := range Stages {
		if q.Stage != "" && q.Stage != st {
			continue
		}
		rows, err := s.stage(ctx, st, q)
		if err != nil {
			return nil, fmt.Errorf("%s: query %s: %w", s.path, st, err)
		}
		out = append(out, rows...)
		if q.Limit > 0 && len(out) >= q.Limit {
			return out[:q.Limit], nil
		}
	}
	return out, nil
}

func (s *Store) stage(ctx context.Context, st Stage, q Query) ([]Row, error) {
	var (
		query string
		f     *filter
		ok    bool
		scan  func(scanner) (Row, error)
	)
	switch st {
	case StageVariant:
		f, ok = s.keyFilter(q, "v", false, false, false)
		if q.Status != "" {
			ok = false
		}
		query = "SELECT v.sha256, v.name, v.refs FROM variants v" + f.sql() + " ORDER BY v.name, v.sha256"
		scan = func(r scanner) (Row, error) {
			var row Row
			var refs string
			err := r.Scan(&row.Variant, &row.Name, &refs)
			if err == nil {
				err = json.Unmarshal([]byte(refs), &row.Refs)
			}
			return row, err
		}
	case StageCompile:
		f, ok = s.keyFilter(q, "c", false, false, true)
		if q.Status != "" {
			f.add("c.status = ?", q.Status)
		}
		query = `SELECT c.variant, c.backend, c.device, v.name, v.refs, c.status, c.message, c.log, c.tg_bytes, c.created
			FROM compiles c JOIN variants v ON v.plan_hash = c.plan_hash AND v.sha256 = c.variant` + f.sql() +
			" ORDER BY v.name, c.variant, c.backend, c.device"
		scan = func(r scanner) (Row, error) {
			var row Row
			var refs, created string
			c := &Compile{}
			err := r.Scan(&row.Variant, &row.Backend, &row.Device, &row.Name, &refs, &c.Status, &c.Message, &c.Log, &c.TGBytes, &created)
			if err == nil {
				err = json.Unmarshal([]byte(refs), &row.Refs)
			}
			c.Created = parseStamp(created)
			row.Compile, row.Status = c, c.Status
			return row, err
		}
	case StageCheck:
		f, ok = s.keyFilter(q, "c", true, false, true)
		if q.Status != "" {
			f.add("c.status = ?", q.Status)
		}
		query = `SELECT c.variant, c.backend, c.device, c.case_name, v.name, v.refs, c.status, c.message, c.findings, c.created
			FROM checks c JOIN variants v ON v.plan_hash = c.plan_hash AND v.sha256 = c.variant` + f.sql() +
			" ORDER BY v.name, c.variant, c.backend, c.device, c.case_name"
		scan = func(r scanner) (Row, error) {
			var row Row
			var refs, created string
			c := &Check{}
			err := r.Scan(&row.Variant, &row.Backend, &row.Device, &row.Case, &row.Name, &refs, &c.Status, &c.Message, &c.Findings, &created)
			if err == nil {
				err = json.Unmarshal([]byte(refs), &row.Refs)
			}
			c.Created = parseStamp(created)
			row.Check, row.Status = c, c.Status
			return row, err
		}
	case StageConfirm:
		f, ok = s.keyFilter(q, "c", true, true, true)
		if q.Status != "" {
			f.add("c.status = ?", q.Status)
		}
		if s.schema < 2 {
			ok = false // written before confirmations were kept
		}
		query = `SELECT c.variant, c.backend, c.device, c.case_name, c.phase, v.name, v.refs, c.status, c.message, c.measurement, c.created
			FROM confirmations c JOIN variants v ON v.plan_hash = c.plan_hash AND v.sha256 = c.variant` + f.sql() +
			" ORDER BY v.name, c.variant, c.backend, c.device, c.case_name, c.phase, c.created, c.measurement"
		scan = func(r scanner) (Row, error) {
			var row Row
			var refs, created string
			c := &Confirmation{}
			err := r.Scan(&row.Variant, &row.Backend, &row.Device, &row.Case, &row.Phase, &row.Name, &refs, &c.Status, &c.Message, &c.Measurement, &created)
			if err == nil {
				err = json.Unmarshal([]byte(refs), &row.Refs)
			}
			c.Created = parseStamp(created)
			row.Confirm, row.Status, row.Measurement = c, c.Status, c.Measurement
			return row, err
		}
	case StageSample:
		f, ok = s.keyFilter(q, "m", true, true, true)
		if q.Status != "" {
			ok = false
		}
		f.add("m.id IN (SELECT measurement FROM summaries)")
		query = `SELECT m.variant, m.backend, m.device, m.case_name, m.phase, v.name, v.refs, m.id, x.pair, x.side, x.ord, x.ns, x.clock, x.created
			FROM samples x JOIN measurements m ON m.id = x.measurement
			JOIN variants v ON v.plan_hash = m.plan_hash AND v.sha256 = m.variant` + f.sql() +
			" ORDER BY v.name, m.variant, m.backend, m.device, m.case_name, m.phase, m.started, m.id, x.pair, x.side"
		scan = func(r scanner) (Row, error) {
			var row Row
			var refs, side, taken string
			x := &Sample{}
			err := r.Scan(&row.Variant, &row.Backend, &row.Device, &row.Case, &row.Phase, &row.Name, &refs, &row.Measurement,
				&x.Pair, &side, &x.Order, &x.NS, &x.Clock, &taken)
			if err == nil {
				err = json.Unmarshal([]byte(refs), &row.Refs)
			}
			x.Side, x.Taken = Side(side), parseStamp(taken)
			row.Sample = x
			return row, err
		}
	case StageSummary, StageControl:
		f, ok = s.keyFilter(q, "m", true, true, true)
		if st == StageControl {
			f.add("m.variant = m.baseline")
		} else {
			f.add("m.variant != m.baseline")
		}
		switch q.Status {
		case "":
		case "contaminated":
			f.add("s.contaminated = 1")
		case "clean":
			f.add("s.contaminated = 0")
		default:
			ok = false
		}
		query = `SELECT ` + measurementCols + `, v.name, v.refs
			FROM measurements m JOIN summaries s ON s.measurement = m.id
			JOIN variants v ON v.plan_hash = m.plan_hash AND v.sha256 = m.variant` + f.sql() +
			" ORDER BY v.name, m.variant, m.backend, m.device, m.case_name, m.phase, m.started, m.id"
		scan = func(r scanner) (Row, error) {
			var row Row
			var refs string
			m, err := scanMeasurement(scanTail{r, []any{&row.Name, &refs}})
			if err == nil {
				err = json.Unmarshal([]byte(refs), &row.Refs)
			}
			row.Stage, row.Key, row.Measurement, row.Summary = st, m.Key, m.ID, m.Summary
			if m.Summary != nil {
				row.Status = "clean"
				if m.Summary.Contaminated {
					row.Status = "contaminated"
				}
			}
			return row, err
		}
	case StageDecision:
		f, ok = s.keyFilter(q, "d", true, true, true)
		if q.Status != "" {
			f.add("d.verdict = ?", q.Status)
		}
		query = `SELECT d.variant, d.backend, d.device, d.case_name, d.phase, v.name, v.refs, d.verdict, d.reasons, d.rule, d.detail, d.created
			FROM decisions d JOIN variants v ON v.plan_hash = d.plan_hash AND v.sha256 = d.variant` + f.sql() +
			" ORDER BY v.name, d.variant, d.backend, d.device, d.case_name, d.phase"
		scan = func(r scanner) (Row, error) {
			var row Row
			var refs, reasons, detail, created string
			d := &Decision{}
			err := r.Scan(&row.Variant, &row.Backend, &row.Device, &row.Case, &row.Phase, &row.Name, &refs,
				&d.Verdict, &reasons, &d.Rule, &detail, &created)
			if err == nil {
				err = json.Unmarshal([]byte(refs), &row.Refs)
			}
			if err == nil {
				err = json.Unmarshal([]byte(reasons), &d.Reasons)
			}
			if detail != "null" {
				d.Detail = json.RawMessage(detail)
			}
			d.Created = parseStamp(created)
			row.Decision, row.Status = d, d.Verdict
			return row, err
		}
	}
	if !ok {
		return nil, nil // a filter this stage cannot satisfy
	}
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := s.db.QueryContext(ctx, query, f.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		row, err := scan(rows)
		if err != nil {
			return nil, err
		}
		row.Stage = st
		if len(row.Refs) == 0 {
			row.Refs = nil
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// scanTail scans the columns of a wrapped scanner and then tail.
type scanTail struct {
	r    scanner
	tail []any
}

func (t scanTail) Scan(dest ...any) error { return t.r.Scan(append(dest, t.tail...)...) }
