package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// applicationID is written to the SQLite header (PRAGMA application_id) of
// every store: "MLRS", metalab results store. A database without it is not
// a store and is never written to.
const applicationID = 0x4d4c5253

// Errors Open, OpenExisting and Merge return; callers tell them apart with
// errors.Is. ErrOtherPlan and ErrOtherBaseline come wrapped in a
// *MismatchError that names both hashes.
var (
	// ErrOtherPlan: the store holds results of another plan.
	ErrOtherPlan = errors.New("store holds another plan")
	// ErrOtherBaseline: the store holds results for another baseline source.
	ErrOtherBaseline = errors.New("store holds another baseline")
	// ErrNotStore: the file is not a metalab results store (another
	// SQLite database, or not a database at all); it is left untouched.
	ErrNotStore = errors.New("not a metalab results store")
	// ErrNewerSchema: the store was written by a newer metalab.
	ErrNewerSchema = errors.New("store schema is newer than this metalab")
	// ErrInUse: another process has the store open for writing.
	ErrInUse = errors.New("store is open for writing by another process")
	// ErrExists: a result with this key is already recorded. Results are
	// append-only; a resumed sweep asks before redoing (HasCheck, ...).
	ErrExists = errors.New("result already recorded")
	// ErrUnknownVariant: a result names a variant PutVariant never recorded.
	ErrUnknownVariant = errors.New("unknown variant")
	// ErrNoMeasurement: a sample or summary names a measurement that does
	// not exist (or was discarded as incomplete by a later Begin).
	ErrNoMeasurement = errors.New("no such measurement")
	// ErrComplete: the measurement already has its summary.
	ErrComplete = errors.New("measurement already complete")
)

// A MismatchError says a store was made for another plan or baseline than
// the one given. Is(ErrOtherPlan) or Is(ErrOtherBaseline) tells which.
type MismatchError struct {
	Path      string
	Kind      error  // ErrOtherPlan or ErrOtherBaseline
	Have      string // hash the store holds
	Want      string // hash the caller gave
	HavePlans int    // plans the store holds (more than one only in a damaged store)
}

func (e *MismatchError) Error() string {
	what := "plan"
	if e.Kind == ErrOtherBaseline {
		what = "baseline sha256"
	}
	return fmt.Sprintf("%s: %v: it holds %s %s, not %s; use another store file", e.Path, e.Kind, what, e.Have, e.Want)
}

// Is reports whether target is e's kind.
func (e *MismatchError) Is(target error) bool { return target == e.Kind }

// A Plan is what a sweep declared before its first measurement: its JSON
// (strategy, rule, cases, pairs, ...) and the sha256 of the baseline
// source it runs against. A store holds the results of exactly one plan.
type Plan struct {
	Baseline string          // hex sha256 of the baseline source
	JSON     json.RawMessage // the plan as the sweep declared it; any valid JSON
}

// Hash returns the plan's identity: the hex sha256 of its JSON with
// insignificant white space removed. The baseline is checked apart from it
// (ErrOtherBaseline), and so is not part of it.
func (p Plan) Hash() (string, error) {
	c, err := compactJSON(p.JSON)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(c)
	return hex.EncodeToString(s[:]), nil
}

func compactJSON(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("plan json: %w", err)
	}
	return buf.Bytes(), nil
}

// A Store is an open results store. Its methods are safe for concurrent
// use; writes are serialised.
type Store struct {
	db       *sql.DB
	path     string
	plan     string // plan hash
	baseline string
	planJSON json.RawMessage
	readOnly bool
	schema   int // schema version: a read-only store may be older than migrations
	unlock   func() error
	now      func() time.Time
}

// Open opens the store at path for a sweep of plan, creating it when the
// file does not exist, and takes the writer's lock (ErrInUse when another
// process holds it). It refuses a store made for another baseline
// (ErrOtherBaseline) or another plan (ErrOtherPlan) so that results are
// never mixed, a file that is not a store (ErrNotStore), and a store
// written by a newer metalab (ErrNewerSchema). The baseline itself is
// recorded as a variant named "baseline".
func Open(path string, plan Plan) (*Store, error) {
	hash, err := plan.Hash()
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if !isSHA256(plan.Baseline) {
		return nil, fmt.Errorf("open store %s: baseline %q is not a hex sha256", path, plan.Baseline)
	}
	compact, _ := compactJSON(plan.JSON)
	if _, err := os.Stat(path); err == nil {
		// Look before locking: no lock file beside what is not a store.
		r, err := open(path, true)
		if err == nil {
			err = r.checkIdentity(context.Background(), true)
			r.Close()
		}
		if err != nil {
			return nil, err
		}
	}
	unlock, err := lockFile(path + "-lock")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s, err := open(path, false)
	if err != nil {
		unlock()
		return nil, err
	}
	s.unlock = unlock
	if err := s.init(context.Background(), hash, plan.Baseline, compact); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenExisting opens an existing store read-only, whatever plan it holds:
// for queries (metalab results) and as a source of Merge. It takes no lock,
// so it may read a store a sweep is writing.
func OpenExisting(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s, err := open(path, true)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := s.checkIdentity(ctx, false); err != nil {
		s.Close()
		return nil, err
	}
	// An older store is read as it is: every later step only adds
	// tables, and what they would hold reads as not recorded.
	v, err := s.schemaVersion(ctx)
	if err == nil && v > len(migrations) {
		err = fmt.Errorf("%s: %w (version %d, this metalab knows %d)", path, ErrNewerSchema, v, len(migrations))
	} else if err == nil && v < 1 {
		err = fmt.Errorf("%s: %w: no schema version", path, ErrNotStore)
	}
	s.schema = v
	if err == nil {
		err = s.loadPlan(ctx)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// dsn returns the connection string for path. Every connection runs in
// WAL mode with synchronous=FULL (see the package doc, "Durability").
func dsn(path string, readOnly bool) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "fullfsync(1)")
	q.Add("_pragma", "checkpoint_fullfsync(1)")
	q.Add("_txlock", "immediate")
	if readOnly {
		q.Add("mode", "ro")
	} else {
		q.Add("mode", "rwc")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String(), nil
}

func open(path string, readOnly bool) (*Store, error) {
	name, err := dsn(path, readOnly)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// One connection: writes are serialised anyway, and a single
	// connection keeps the per-connection pragmas in one place.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, readOnly: readOnly, now: time.Now}
	if err := db.PingContext(context.Background()); err != nil {
		db.Close()
		if isCode(err, sqlite3.SQLITE_NOTADB) {
			return nil, fmt.Errorf("open store %s: %w: %w", path, ErrNotStore, err)
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// Close closes the store and releases the writer's lock.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.unlock != nil {
		if uerr := s.unlock(); err == nil {
			err = uerr
		}
		s.unlock = nil
	}
	if err != nil {
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	return nil
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// PlanHash returns the hash of the plan the store holds.
func (s *Store) PlanHash() string { return s.plan }

// Baseline returns the sha256 of the baseline source the store holds
// results for. Key.Variant is this value for the baseline's own results
// and for controls (baseline against baseline).
func (s *Store) Baseline() string { return s.baseline }

// SchemaVersion returns the store's schema version. A store opened for
// writing has the newest; one opened read-only may be older, and then
// lacks what later versions record (confirmations before version 2).
func (s *Store) SchemaVersion() int { return s.schema }

// PlanJSON returns the plan's JSON as the store holds it (compacted).
func (s *Store) PlanJSON() json.RawMessage { return s.planJSON }

// checkIdentity refuses a database that is not a store. An empty database
// (no tables, application id 0) is a new store when allowNew.
func (s *Store) checkIdentity(ctx context.Context, allowNew bool) error {
	var id int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return fmt.Errorf("%s: %w: %w", s.path, ErrNotStore, err)
	}
	if id == applicationID {
		return nil
	}
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return fmt.Errorf("%s: %w: %w", s.path, ErrNotStore, err)
	}
	if id == 0 && n == 0 && allowNew {
		return nil
	}
	return fmt.Errorf("%s: %w (application id %#x, %d schema objects)", s.path, ErrNotStore, id, n)
}

func (s *Store) schemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, "SELECT max(version) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("%s: schema version: %w", s.path, err)
	}
	return int(v.Int64), nil
}

// init makes a new store or checks an existing one against the plan.
func (s *Store) init(ctx context.Context, hash, baseline string, planJSON []byte) error {
	if err := s.checkIdentity(ctx, true); err != nil {
		return err
	}
	// WAL is a property of the file; set it once, outside a transaction.
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return fmt.Errorf("%s: journal mode: %w", s.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("%s: journal mode is %q, want wal", s.path, mode)
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	s.schema = len(migrations)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, "SELECT hash, baseline FROM plans")
	if err != nil {
		return fmt.Errorf("%s: read plans: %w", s.path, err)
	}
	var have [][2]string
	for rows.Next() {
		var h, b string
		if err := rows.Scan(&h, &b); err != nil {
			rows.Close()
			return fmt.Errorf("%s: read plans: %w", s.path, err)
		}
		have = append(have, [2]string{h, b})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: read plans: %w", s.path, err)
	}
	switch {
	case len(have) == 0:
		now := s.stamp()
		if _, err := tx.ExecContext(ctx, "INSERT INTO plans (hash, baseline, json, created) VALUES (?, ?, ?, ?)",
			hash, baseline, string(planJSON), now); err != nil {
			return fmt.Errorf("%s: record plan: %w", s.path, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO variants (plan_hash, sha256, name, refs, created) VALUES (?, ?, 'baseline', '[]', ?)",
			hash, baseline, now); err != nil {
			return fmt.Errorf("%s: record baseline: %w", s.path, err)
		}
	case have[0][1] != baseline:
		return &MismatchError{Path: s.path, Kind: ErrOtherBaseline, Have: have[0][1], Want: baseline, HavePlans: len(have)}
	case have[0][0] != hash || len(have) > 1:
		return &MismatchError{Path: s.path, Kind: ErrOtherPlan, Have: have[0][0], Want: hash, HavePlans: len(have)}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return s.loadPlan(ctx)
}

func (s *Store) loadPlan(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "SELECT hash, baseline, json FROM plans")
	if err != nil {
		return fmt.Errorf("%s: read plan: %w", s.path, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var j string
		if err := rows.Scan(&s.plan, &s.baseline, &j); err != nil {
			return fmt.Errorf("%s: read plan: %w", s.path, err)
		}
		s.planJSON = json.RawMessage(j)
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: read plan: %w", s.path, err)
	}
	if n != 1 {
		return fmt.Errorf("%s: store holds %d plans, want 1", s.path, n)
	}
	return nil
}

func (s *Store) stamp() string { return s.now().UTC().Format(time.RFC3339Nano) }

func parseStamp(v string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, v)
	return t
}

func isSHA256(s string) bool {
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

// IntegrityCheck runs SQLite's integrity check over the whole file and
// the foreign key check, and returns an error listing what is wrong.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("%s: integrity check: %w", s.path, err)
	}
	var bad []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			rows.Close()
			return fmt.Errorf("%s: integrity check: %w", s.path, err)
		}
		if m != "ok" {
			bad = append(bad, m)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: integrity check: %w", s.path, err)
	}
	fk, err := s.db.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return fmt.Errorf("%s: foreign key check: %w", s.path, err)
	}
	for fk.Next() {
		var table, parent string
		var rowid, fkid sql.NullInt64
		if err := fk.Scan(&table, &rowid, &parent, &fkid); err != nil {
			fk.Close()
			return fmt.Errorf("%s: foreign key check: %w", s.path, err)
		}
		bad = append(bad, fmt.Sprintf("%s row %d: no %s row", table, rowid.Int64, parent))
	}
	fk.Close()
	if err := fk.Err(); err != nil {
		return fmt.Errorf("%s: foreign key check: %w", s.path, err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: store is damaged: %v", s.path, bad)
	}
	return nil
}
