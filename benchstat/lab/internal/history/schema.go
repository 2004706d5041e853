package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migrations are the schema's steps in order: migrations[i] takes a
// database from version i to i+1. Append only; never edit a step that
// has shipped, since databases out there already ran it.
var migrations = []string{
	// 1: runs, their labels and their results.
	`
CREATE TABLE runs (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	added_at TEXT NOT NULL,            -- RFC 3339, UTC
	file     TEXT NOT NULL,            -- the file's name as given to add
	role     TEXT NOT NULL DEFAULT '', -- base, head, ... when a label says so
	raw      BLOB NOT NULL             -- the benchfmt text, byte for byte
);
CREATE TABLE labels (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	key    TEXT NOT NULL,
	value  TEXT NOT NULL,
	origin TEXT NOT NULL,              -- 'file': a configuration line; 'flag': -label
	PRIMARY KEY (run_id, key, value, origin)
) WITHOUT ROWID;
CREATE INDEX labels_key_value ON labels(key, value);
CREATE TABLE results (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq    INTEGER NOT NULL,           -- the result's position in the file, from 0
	name   TEXT NOT NULL,              -- as written: Benchmark..., sub-benchmarks and -GOMAXPROCS suffix included
	unit   TEXT NOT NULL,              -- as written (ns/op, not benchfmt's sec/op)
	value  REAL NOT NULL,
	iters  INTEGER NOT NULL
);
CREATE INDEX results_name_unit ON results(name, unit);
CREATE INDEX results_run ON results(run_id);
`,
}

// SchemaVersion is the version this package writes and reads.
func SchemaVersion() int { return len(migrations) }

// ErrNewerSchema is returned by Open for a database written by a newer
// version of this package: reading it could misread it, writing could
// corrupt it.
var ErrNewerSchema = errors.New("database schema is newer than this program knows")

// migrate brings db to len(steps), in one immediate transaction, so that
// two processes opening a new database at once run each step once: the
// second waits, then finds the version already there.
func migrate(ctx context.Context, db *sql.DB, steps []string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if v > len(steps) {
		return fmt.Errorf("%w: version %d, this program knows up to %d; use a newer kvb", ErrNewerSchema, v, len(steps))
	}
	if v == len(steps) {
		return nil
	}
	for i := v; i < len(steps); i++ {
		if _, err := tx.ExecContext(ctx, steps[i]); err != nil {
			return fmt.Errorf("schema migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(steps)); err != nil {
		return err
	}
	return tx.Commit()
}
