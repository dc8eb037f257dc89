package store

import (
	"context"
	"fmt"
)

// migrations are the schema, one step per version: migrations[i] takes the
// store from version i to version i+1, in one transaction that also records
// the step in schema_migrations. Steps are never edited once released; a
// change of schema is a new step.
var migrations = []string{
	// 1: plans, variants and the results of every stage.
	`
CREATE TABLE plans (
	hash     TEXT PRIMARY KEY,  -- sha256 of the plan's compacted JSON
	baseline TEXT NOT NULL,     -- sha256 of the baseline source
	json     TEXT NOT NULL,
	created  TEXT NOT NULL      -- RFC 3339, UTC
) STRICT;

CREATE TABLE variants (
	plan_hash TEXT NOT NULL REFERENCES plans (hash),
	sha256    TEXT NOT NULL,
	name      TEXT NOT NULL,
	refs      TEXT NOT NULL,    -- JSON array of site refs, ID=CHOICE
	created   TEXT NOT NULL,
	PRIMARY KEY (plan_hash, sha256)
) STRICT;

CREATE TABLE compiles (
	plan_hash TEXT NOT NULL,
	baseline  TEXT NOT NULL,
	variant   TEXT NOT NULL,
	backend   TEXT NOT NULL,
	device    TEXT NOT NULL,
	status    TEXT NOT NULL,
	message   TEXT NOT NULL,
	log       TEXT NOT NULL,
	tg_bytes  INTEGER NOT NULL, -- static threadgroup memory; -1 unknown
	created   TEXT NOT NULL,
	PRIMARY KEY (plan_hash, variant, backend, device),
	FOREIGN KEY (plan_hash, variant) REFERENCES variants (plan_hash, sha256)
) STRICT;

CREATE TABLE checks (
	plan_hash TEXT NOT NULL,
	baseline  TEXT NOT NULL,
	variant   TEXT NOT NULL,
	backend   TEXT NOT NULL,
	device    TEXT NOT NULL,
	case_name TEXT NOT NULL,
	status    TEXT NOT NULL,
	message   TEXT NOT NULL,
	findings  INTEGER NOT NULL,
	created   TEXT NOT NULL,
	PRIMARY KEY (plan_hash, variant, backend, device, case_name),
	FOREIGN KEY (plan_hash, variant) REFERENCES variants (plan_hash, sha256)
) STRICT;

-- A measurement is one run of paired alternating A/B timing: A is the
-- baseline, B the variant (the baseline again for a control). It is
-- complete when its summary is written; Begin discards incomplete ones.
CREATE TABLE measurements (
	id        TEXT PRIMARY KEY, -- random, so shards never collide
	plan_hash TEXT NOT NULL,
	baseline  TEXT NOT NULL,
	variant   TEXT NOT NULL,
	backend   TEXT NOT NULL,
	device    TEXT NOT NULL,
	case_name TEXT NOT NULL,
	phase     TEXT NOT NULL,
	started   TEXT NOT NULL,
	FOREIGN KEY (plan_hash, variant) REFERENCES variants (plan_hash, sha256)
) STRICT;
CREATE INDEX measurements_key ON measurements (plan_hash, variant, backend, device, case_name, phase);

CREATE TABLE samples (
	measurement TEXT NOT NULL REFERENCES measurements (id) ON DELETE CASCADE,
	pair        INTEGER NOT NULL CHECK (pair >= 0),
	side        TEXT NOT NULL CHECK (side IN ('A', 'B')),
	ord         INTEGER NOT NULL CHECK (ord IN (0, 1)), -- 0: ran first in its pair
	ns          INTEGER NOT NULL CHECK (ns >= 0),
	clock       TEXT NOT NULL,
	created     TEXT NOT NULL,
	PRIMARY KEY (measurement, pair, side)
) STRICT;

CREATE TABLE summaries (
	measurement  TEXT PRIMARY KEY REFERENCES measurements (id) ON DELETE CASCADE,
	pairs        INTEGER NOT NULL,
	median_a_ns  REAL NOT NULL,
	median_b_ns  REAL NOT NULL,
	ratio        REAL NOT NULL, -- median of the per-pair ratios B/A
	ci_low       REAL NOT NULL,
	ci_high      REAL NOT NULL,
	ci_level     REAL NOT NULL,
	ratio_min    REAL NOT NULL,
	ratio_max    REAL NOT NULL,
	contaminated INTEGER NOT NULL,
	flags        TEXT NOT NULL, -- JSON array
	note         TEXT NOT NULL,
	detail       TEXT NOT NULL, -- JSON, as the measuring code gave it; 'null' when none
	created      TEXT NOT NULL
) STRICT;

CREATE TABLE decisions (
	plan_hash TEXT NOT NULL,
	baseline  TEXT NOT NULL,
	variant   TEXT NOT NULL,
	backend   TEXT NOT NULL,
	device    TEXT NOT NULL,
	case_name TEXT NOT NULL,
	phase     TEXT NOT NULL,
	verdict   TEXT NOT NULL,
	reasons   TEXT NOT NULL, -- JSON array
	rule      TEXT NOT NULL,
	detail    TEXT NOT NULL, -- JSON; 'null' when none
	created   TEXT NOT NULL,
	PRIMARY KEY (plan_hash, variant, backend, device, case_name, phase),
	FOREIGN KEY (plan_hash, variant) REFERENCES variants (plan_hash, sha256)
) STRICT;

-- Controls are the complete measurements of the baseline against itself.
CREATE VIEW controls AS
	SELECT m.*, s.pairs, s.median_a_ns, s.median_b_ns, s.ratio, s.ci_low, s.ci_high,
		s.ci_level, s.ratio_min, s.ratio_max, s.contaminated, s.flags, s.note
	FROM measurements m JOIN summaries s ON s.measurement = m.id
	WHERE m.variant = m.baseline;
`,
	// 2: the second part of a variant's verdict, on the timing backend.
	`
-- A confirmation is a variant's bytes on the backend that times it: at a
-- timed case before it is timed there (phase and measurement ''), and
-- after each measurement of it, the last timed sample's outputs read back
-- (the measurement's phase and id, written with its summary). Its
-- verification, on the checking backend, is that backend's compiles and
-- checks rows.
CREATE TABLE confirmations (
	plan_hash   TEXT NOT NULL,
	baseline    TEXT NOT NULL,
	variant     TEXT NOT NULL,
	backend     TEXT NOT NULL,
	device      TEXT NOT NULL,
	case_name   TEXT NOT NULL,
	phase       TEXT NOT NULL,
	measurement TEXT NOT NULL,
	status      TEXT NOT NULL,
	message     TEXT NOT NULL,
	created     TEXT NOT NULL,
	PRIMARY KEY (plan_hash, variant, backend, device, case_name, phase, measurement),
	FOREIGN KEY (plan_hash, variant) REFERENCES variants (plan_hash, sha256)
) STRICT;
`,
}

// migrate brings the store to the newest schema version. The first step
// also creates schema_migrations and sets the application id, in the same
// transaction, so a store is either new (empty) or a store.
func (s *Store) migrate(ctx context.Context) error {
	var tables int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name = 'schema_migrations'").Scan(&tables); err != nil {
		return fmt.Errorf("%s: schema version: %w", s.path, err)
	}
	v := 0
	if tables > 0 {
		var err error
		if v, err = s.schemaVersion(ctx); err != nil {
			return err
		}
	}
	if v > len(migrations) {
		return fmt.Errorf("%s: %w (version %d, this metalab knows %d)", s.path, ErrNewerSchema, v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		if err := s.step(ctx, v); err != nil {
			return fmt.Errorf("%s: migrate to version %d: %w", s.path, v+1, err)
		}
	}
	return nil
}

// step applies migrations[v].
func (s *Store) step(ctx context.Context, v int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if v == 0 {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE schema_migrations (
	version INTEGER PRIMARY KEY,
	applied TEXT NOT NULL
) STRICT`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, applied) VALUES (?, ?)", v+1, s.stamp()); err != nil {
		return err
	}
	return tx.Commit()
}
