package history

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// busyTimeoutMS is how long a writer waits for another's transaction
// before giving up: far longer than any add takes.
const busyTimeoutMS = 60000

// Store is an open history database.
type Store struct {
	db   *sql.DB
	path string
}

// Open opens the database at path, creating it and its directory if need
// be, and migrates its schema to this package's version. A database with
// a newer schema is refused (ErrNewerSchema).
func Open(ctx context.Context, path string) (*Store, error) {
	return openSteps(ctx, path, migrations)
}

func openSteps(ctx context.Context, path string, steps []string) (*Store, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	unlock, err := lockOpen(path)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", path, err)
	}
	defer unlock()
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", path, err)
	}
	if err := migrate(ctx, db, steps); err != nil {
		db.Close()
		return nil, fmt.Errorf("history: %s: %w", path, err)
	}
	return &Store{db: db, path: path}, nil
}

// dsn sets, on every connection: the busy timeout first (so that
// switching to WAL waits too), WAL (readers never block the writer, and
// a commit is one append), foreign keys, and BEGIN IMMEDIATE, so a
// transaction takes the write lock at its start and waits for it there,
// instead of failing with SQLITE_BUSY when it first writes.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Path is the database's file name.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }
