package history

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func version(t *testing.T, s *Store) int {
	t.Helper()
	var v int
	if err := s.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReopenIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.Add(ctx, []*File{suiteFile(t)}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for range 2 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if v := version(t, s); v != SchemaVersion() {
			t.Errorf("version %d after reopening, want %d", v, SchemaVersion())
		}
		if n := count(t, s, "schema_version"); n != 1 {
			t.Errorf("schema_version has %d rows, want 1", n)
		}
		if n := count(t, s, "runs"); n != 1 {
			t.Errorf("%d runs after reopening, want 1", n)
		}
		s.Close()
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.db.Exec(`UPDATE schema_version SET version = ?`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(ctx, path)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a newer database = %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{path, "version 2", "knows up to 1", "use a newer kvb"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A database made at version 1 takes a second step on its next open and
// keeps its runs. The step is this test's own: the schema has one version.
func TestMigratesFromFirstVersion(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := openSteps(ctx, path, migrations[:1])
	if err != nil {
		t.Fatal(err)
	}
	f := suiteFile(t)
	if _, err := s.Add(ctx, []*File{f}, []Label{{"commit", "v1"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	steps := append(migrations[:1:1], `ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT 'migrated'`)
	s, err = openSteps(ctx, path, steps)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := version(t, s); v != 2 {
		t.Errorf("version %d after migrating, want 2", v)
	}
	var note string
	if err := s.db.QueryRow(`SELECT note FROM runs WHERE id = 1`).Scan(&note); err != nil || note != "migrated" {
		t.Errorf("the new column: %q, %v", note, err)
	}
	runs, err := s.List(ctx, []Label{{"commit", "v1"}})
	if err != nil || len(runs) != 1 {
		t.Fatalf("list after migrating: %v, %v", runs, err)
	}
	raw, err := s.Export(ctx, runs[0].ID)
	if err != nil || !bytes.Equal(raw, f.Raw) {
		t.Errorf("export after migrating: %d bytes, %v", len(raw), err)
	}
}
