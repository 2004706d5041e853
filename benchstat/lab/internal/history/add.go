package history

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Added says what one Add recorded.
type Added struct {
	Runs    []int64 // the new runs' ids, in the order of the files
	Results int
}

// testHookBeforeCommit, when set, runs inside Add's transaction after
// every row is inserted: the killed-add test stops the process there.
var testHookBeforeCommit func()

// Add records files as runs, each with its configuration lines and the
// given labels, all in one transaction: either every file lands or none
// does. The role column takes the "role" label, from labels first, then
// from the file's configuration.
func (s *Store) Add(ctx context.Context, files []*File, labels []Label) (Added, error) {
	var a Added
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: waits for another writer
	if err != nil {
		return a, fmt.Errorf("history: %s: %w", s.path, err)
	}
	defer tx.Rollback()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, f := range files {
		id, err := addFile(ctx, tx, f, labels, now)
		if err != nil {
			return Added{}, fmt.Errorf("history: %s: adding %s: %w", s.path, f.Name, err)
		}
		a.Runs = append(a.Runs, id)
		a.Results += len(f.Results)
	}
	if testHookBeforeCommit != nil {
		testHookBeforeCommit()
	}
	if err := tx.Commit(); err != nil {
		return Added{}, fmt.Errorf("history: %s: %w", s.path, err)
	}
	return a, nil
}

func addFile(ctx context.Context, tx *sql.Tx, f *File, labels []Label, now string) (int64, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (added_at, file, role, raw) VALUES (?, ?, ?, ?)`,
		now, f.Name, role(f, labels), f.Raw)
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	lab, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO labels (run_id, key, value, origin) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer lab.Close()
	for _, l := range f.Config {
		if _, err := lab.ExecContext(ctx, id, l.Key, l.Value, "file"); err != nil {
			return 0, err
		}
	}
	for _, l := range labels {
		if _, err := lab.ExecContext(ctx, id, l.Key, l.Value, "flag"); err != nil {
			return 0, err
		}
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO results (run_id, seq, name, unit, value, iters) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	for _, r := range f.Results {
		if _, err := ins.ExecContext(ctx, id, r.Seq, r.Name, r.Unit, r.Value, r.Iters); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// role is the run's "role" label: a command-line label wins over the
// file's configuration line.
func role(f *File, labels []Label) string {
	for _, l := range labels {
		if l.Key == "role" {
			return l.Value
		}
	}
	for _, l := range f.Config {
		if l.Key == "role" {
			return l.Value
		}
	}
	return ""
}
