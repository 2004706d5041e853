package history

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testdataFile = "testdata/readrandom.txt"

// openTemp opens a new store in a temporary directory.
func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "history.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// suiteFile parses the suite's testdata file.
func suiteFile(t *testing.T) *File {
	t.Helper()
	raw, err := os.ReadFile(testdataFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(testdataFile, raw)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// countValues counts the values on the benchmark lines of raw, apart
// from benchfmt: each line is name, iterations, then value-unit pairs.
func countValues(raw []byte) int {
	n := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "Benchmark") {
			n += (len(strings.Fields(line)) - 2) / 2
		}
	}
	return n
}

// count returns the number of rows of table.
func count(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
