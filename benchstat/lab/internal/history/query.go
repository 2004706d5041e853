package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Run is one recorded file, as list shows it.
type Run struct {
	ID      int64
	AddedAt time.Time
	File    string
	Role    string
	Results int
	Labels  []Label // every label, file and command line, by key then value
}

// Label returns the run's first value for key, or "".
func (r Run) Label(key string) string {
	for _, l := range r.Labels {
		if l.Key == key {
			return l.Value
		}
	}
	return ""
}

// List returns the runs that carry every one of the filter labels, oldest
// first.
func (s *Store) List(ctx context.Context, filter []Label) ([]Run, error) {
	q := `SELECT id, added_at, file, role, (SELECT count(*) FROM results WHERE run_id = runs.id) FROM runs`
	var args []any
	var where []string
	for _, l := range filter {
		where = append(where, `id IN (SELECT run_id FROM labels WHERE key = ? AND value = ?)`)
		args = append(args, l.Key, l.Value)
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id"
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", s.path, err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var r Run
		var at string
		if err := rows.Scan(&r.ID, &at, &r.File, &r.Role, &r.Results); err != nil {
			return nil, fmt.Errorf("history: %s: %w", s.path, err)
		}
		if r.AddedAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("history: %s: run %d: added_at %q: %w", s.path, r.ID, at, err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: %s: %w", s.path, err)
	}
	rows.Close()
	for i := range runs {
		if runs[i].Labels, err = s.labels(ctx, runs[i].ID); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

func (s *Store) labels(ctx context.Context, id int64) ([]Label, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT key, value FROM labels WHERE run_id = ? ORDER BY key, value`, id)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", s.path, err)
	}
	defer rows.Close()
	var ls []Label
	for rows.Next() {
		var l Label
		if err := rows.Scan(&l.Key, &l.Value); err != nil {
			return nil, fmt.Errorf("history: %s: %w", s.path, err)
		}
		ls = append(ls, l)
	}
	return ls, rows.Err()
}

// ErrNoRun is returned by Export for an id the store does not hold.
var ErrNoRun = errors.New("no such run")

// Export returns run id's file exactly as it was added.
func (s *Store) Export(ctx context.Context, id int64) ([]byte, error) {
	var raw []byte
	err := s.db.QueryRowContext(ctx, `SELECT raw FROM runs WHERE id = ?`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("history: %s: run %d: %w", s.path, id, ErrNoRun)
	}
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", s.path, err)
	}
	return raw, nil
}
