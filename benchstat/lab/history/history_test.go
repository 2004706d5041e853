package history

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const suiteFile = "../internal/history/testdata/readrandom.txt"

// runHistory runs the command and returns its exit status and streams.
func runHistory(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestAddListExport(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	code, out, errs := runHistory("add", suiteFile, suiteFile, "-label", "commit=abc123", "-label", "dirty=true", "-history", db)
	if code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	if want := "history: 2 files, 144 results -> " + db + " (runs 1-2)\n"; out != want {
		t.Errorf("add said %q, want %q", out, want)
	}
	if code, _, errs := runHistory("add", "-history", db, suiteFile, "-label", "commit=def456"); code != 0 {
		t.Fatalf("add with flags first: exit %d: %s", code, errs)
	}

	code, out, errs = runHistory("list", "-history", db, "-label", "commit=abc123")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("list -label commit=abc123:\n%s", out)
	}
	row := regexp.MustCompile(`^1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +` + regexp.QuoteMeta(suiteFile) + ` +- +abc123\+dirty +- +AMD EPYC x2 +go1\.26\.8 +72$`)
	if !row.MatchString(lines[1]) {
		t.Errorf("list row %q does not match %s", lines[1], row)
	}
	if _, out, _ := runHistory("list", "-history", db); strings.Count(out, "\n") != 4 {
		t.Errorf("list of every run:\n%s", out)
	}
	if code, out, errs := runHistory("list", "-history", db, "-label", "commit=none"); code != 0 || out != "" || !strings.Contains(errs, "no runs with commit=none") {
		t.Errorf("list of nothing: exit %d, %q, %q", code, out, errs)
	}

	code, out, errs = runHistory("export", "3", "-history", db)
	raw, err := os.ReadFile(suiteFile)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || out != string(raw) {
		t.Errorf("export 3: exit %d (%s), %d bytes, want the file's %d", code, errs, len(out), len(raw))
	}
	if code, _, errs := runHistory("export", "4", "-history", db); code != 1 || !strings.Contains(errs, "run 4: no such run") {
		t.Errorf("export 4: exit %d, %q", code, errs)
	}
}

// A file that does not parse refuses the whole add, naming the file and
// line, even after a good file: nothing is recorded, and no database is
// created for it.
func TestMalformedFileRefusesTheAdd(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("goos: linux\nBenchmarkA-2 \t 10 \t 5 ns/op\nBenchmarkB-2 \t ten \t 5 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runHistory("add", suiteFile, bad, "-history", db)
	if code != 1 || out != "" {
		t.Errorf("add of a bad file: exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errs, bad+":3: ") || !strings.Contains(errs, "nothing added") {
		t.Errorf("error %q names no file:line, or does not say nothing was added", errs)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the refused add left a database: %v", err)
	}

	// Into an existing database: still nothing.
	if code, _, errs := runHistory("add", suiteFile, "-history", db); code != 0 {
		t.Fatal(errs)
	}
	if code, _, _ := runHistory("add", suiteFile, bad, "-history", db); code != 1 {
		t.Errorf("second bad add: exit %d", code)
	}
	if _, out, _ := runHistory("list", "-history", db); strings.Count(out, "\n") != 2 {
		t.Errorf("after the refused add, list:\n%s", out)
	}
}

// Usage errors exit 2 before any work: no database is created.
func TestUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	for _, args := range [][]string{
		{},
		{"remove", "1"},
		{"add", "-history", db},
		{"add", suiteFile, "-label", "commit", "-history", db},
		{"add", suiteFile, "-label", "=x", "-history", db},
		{"add", suiteFile, "-label", "k=", "-history", db},
		{"add", suiteFile, "-bogus", "-history", db},
		{"list", "extra", "-history", db},
		{"export", "-history", db},
		{"export", "1", "2", "-history", db},
		{"export", "one", "-history", db},
		{"export", "0", "-history", db},
	} {
		code, out, errs := runHistory(args...)
		if code != 2 || out != "" || errs == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and a message", args, code, out, errs)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a usage error created the database: %v", err)
	}
	if code, _, errs := runHistory("list", "-history", db); code != 1 || !strings.Contains(errs, "no history at "+db) {
		t.Errorf("list of a missing database: exit %d, %q", code, errs)
	}
}

func TestDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	if code, out, errs := runHistory("add", suiteFile); code != 0 || !strings.Contains(out, "-> "+filepath.Join(dir, "kvbench", "history.db")) {
		t.Errorf("add to the default path: exit %d, %q, %q", code, out, errs)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", dir)
	if code, out, errs := runHistory("add", suiteFile); code != 0 || !strings.Contains(out, "-> "+filepath.Join(dir, ".local", "share", "kvbench", "history.db")) {
		t.Errorf("add without XDG_DATA_HOME: exit %d, %q, %q", code, out, errs)
	}
}
