package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
)

// A ConflictError says two stores hold different outcomes for the same
// result: a check that passed in one and failed in the other, two
// verdicts on one variant. Merge refuses rather than pick one.
type ConflictError struct {
	Src   string // the source store
	Stage Stage
	Key   Key
	Have  string // what the destination holds
	Got   string // what the source holds
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s: the destination holds %s, %s holds %s; the results disagree, so nothing was merged (re-run that %s in one store)",
		e.Stage, e.Key, e.Have, e.Src, e.Got, e.Stage)
}

// Merge adds the results of the stores srcs (shards of one sweep) to the
// store dst, creating dst when it does not exist. Every source must hold
// the same plan and baseline as dst and as each other (ErrOtherPlan,
// ErrOtherBaseline). Merging is idempotent: a result dst already holds is
// not added again, so merging twice adds nothing.
//
// Variants, compiles, checks and decisions are keyed results: one that dst
// holds with a different outcome (status, threadgroup bytes, findings,
// verdict) is a *ConflictError. Measurements are copied whole, with their
// samples and summary, when complete; an incomplete one (a shard that was
// interrupted) is not copied, and an incomplete one in dst is replaced by
// the source's complete copy of the same measurement. All sources are
// merged in one transaction: on any error dst is as it was (and a dst that
// Merge created is removed).
func Merge(dst string, srcs ...string) (err error) {
	ctx := context.Background()
	if len(srcs) == 0 {
		return fmt.Errorf("merge into %s: no source stores", dst)
	}
	var opened []*Store
	defer func() {
		for _, s := range opened {
			s.Close()
		}
	}()
	dstInfo, statErr := os.Stat(dst)
	existed := statErr == nil
	for _, p := range srcs {
		s, err := OpenExisting(p)
		if err != nil {
			return fmt.Errorf("merge into %s: %w", dst, err)
		}
		opened = append(opened, s)
		if first := opened[0]; s.baseline != first.baseline {
			return fmt.Errorf("merge into %s: %w", dst, &MismatchError{Path: p, Kind: ErrOtherBaseline, Have: s.baseline, Want: first.baseline})
		} else if s.plan != first.plan {
			return fmt.Errorf("merge into %s: %w", dst, &MismatchError{Path: p, Kind: ErrOtherPlan, Have: s.plan, Want: first.plan})
		}
	}
	plan := Plan{Baseline: opened[0].baseline, JSON: opened[0].planJSON}
	d, err := Open(dst, plan)
	if err != nil {
		return fmt.Errorf("merge into %s: %w", dst, err)
	}
	defer func() {
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err != nil && !existed {
			for _, suffix := range []string{"", "-wal", "-shm", "-lock"} {
				os.Remove(dst + suffix)
			}
		}
	}()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("merge into %s: %w", dst, err)
	}
	defer tx.Rollback()
	for _, s := range opened {
		if existed {
			if info, err := os.Stat(s.path); err == nil && os.SameFile(info, dstInfo) {
				continue // a store merged into itself adds nothing
			}
		}
		if err := mergeOne(ctx, tx, s); err != nil {
			return fmt.Errorf("merge %s into %s: %w", s.path, dst, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("merge into %s: %w", dst, err)
	}
	return nil
}

// A keyed table is copied row by row: rows dst lacks are inserted, rows
// it holds must agree on the compare columns.
type keyed struct {
	stage   Stage
	table   string
	key     []string
	compare []string
}

var keyedTables = []keyed{
	{StageVariant, "variants", []string{"plan_hash", "sha256"}, []string{"name", "refs"}},
	{StageCompile, "compiles", []string{"plan_hash", "variant", "backend", "device"}, []string{"status", "tg_bytes"}},
	{StageCheck, "checks", []string{"plan_hash", "variant", "backend", "device", "case_name"}, []string{"status", "findings"}},
	{StageDecision, "decisions", []string{"plan_hash", "variant", "backend", "device", "case_name", "phase"}, []string{"verdict"}},
	{StageConfirm, "confirmations", []string{"plan_hash", "variant", "backend", "device", "case_name", "phase", "measurement"}, []string{"status"}},
}

func mergeOne(ctx context.Context, tx *sql.Tx, src *Store) error {
	for _, t := range keyedTables {
		if t.table == "confirmations" && src.schema < 2 {
			continue // written before confirmations were kept
		}
		cols, rows, err := readRows(ctx, src.db, "SELECT * FROM "+t.table)
		if err != nil {
			return fmt.Errorf("read %s: %w", t.table, err)
		}
		for _, r := range rows {
			if err := mergeRow(ctx, tx, src.path, t, cols, r); err != nil {
				return err
			}
		}
	}
	// Measurements whole, complete ones only; variants are in by now.
	mcols, ms, err := readRows(ctx, src.db, "SELECT * FROM measurements WHERE id IN (SELECT measurement FROM summaries)")
	if err != nil {
		return fmt.Errorf("read measurements: %w", err)
	}
	for _, m := range ms {
		id := get(mcols, m, "id")
		var have, done int
		if err := tx.QueryRowContext(ctx, "SELECT count(*), (SELECT count(*) FROM summaries WHERE measurement = ?) FROM measurements WHERE id = ?", id, id).
			Scan(&have, &done); err != nil {
			return err
		}
		if done > 0 {
			continue
		}
		if have > 0 {
			if _, err := tx.ExecContext(ctx, "DELETE FROM measurements WHERE id = ?", id); err != nil {
				return err
			}
		}
		if err := insertRow(ctx, tx, "measurements", mcols, m); err != nil {
			return err
		}
		for _, t := range []string{"samples", "summaries"} {
			cols, rows, err := readRows(ctx, src.db, "SELECT * FROM "+t+" WHERE measurement = ?", id)
			if err != nil {
				return fmt.Errorf("read %s: %w", t, err)
			}
			for _, r := range rows {
				if err := insertRow(ctx, tx, t, cols, r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func mergeRow(ctx context.Context, tx *sql.Tx, src string, t keyed, cols []string, r []any) error {
	var where []string
	var args []any
	for _, k := range t.key {
		where = append(where, k+" = ?")
		args = append(args, get(cols, r, k))
	}
	have := make([]any, len(t.compare))
	ptrs := make([]any, len(have))
	for i := range have {
		ptrs[i] = &have[i]
	}
	err := tx.QueryRowContext(ctx, "SELECT "+strings.Join(t.compare, ", ")+" FROM "+t.table+" WHERE "+strings.Join(where, " AND "), args...).Scan(ptrs...)
	if errors.Is(err, sql.ErrNoRows) {
		return insertRow(ctx, tx, t.table, cols, r)
	}
	if err != nil {
		return err
	}
	var h, g []string
	for i, c := range t.compare {
		hv, gv := fmt.Sprint(have[i]), fmt.Sprint(get(cols, r, c))
		if hv != gv {
			h = append(h, c+" "+hv)
			g = append(g, c+" "+gv)
		}
	}
	if len(h) == 0 {
		return nil
	}
	k := Key{Variant: str(get(cols, r, "variant")), Backend: str(get(cols, r, "backend")), Device: str(get(cols, r, "device")),
		Case: str(get(cols, r, "case_name")), Phase: str(get(cols, r, "phase"))}
	if t.table == "variants" {
		k.Variant = str(get(cols, r, "sha256"))
	}
	return &ConflictError{Src: src, Stage: t.stage, Key: k, Have: strings.Join(h, ", "), Got: strings.Join(g, ", ")}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func get(cols []string, r []any, col string) any {
	for i, c := range cols {
		if c == col {
			return r[i]
		}
	}
	return nil
}

func readRows(ctx context.Context, db *sql.DB, query string, args ...any) ([]string, [][]any, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]any
	for rows.Next() {
		r := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range r {
			ptrs[i] = &r[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, r)
	}
	return cols, out, rows.Err()
}

func insertRow(ctx context.Context, tx *sql.Tx, table string, cols []string, r []any) error {
	q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(cols)-1) + ")"
	if _, err := tx.ExecContext(ctx, q, r...); err != nil {
		return fmt.Errorf("copy into %s: %w", table, err)
	}
	return nil
}
