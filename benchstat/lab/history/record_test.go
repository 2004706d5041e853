package history

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
)

// TestRecordCheckoutLabels: a run's file goes into the store with the
// checkout's labels, and one line says where; a file that does not parse
// is reported, and the others are recorded. The checkout is the test's
// own, so that no other work in this one (a commit, an edit) moves what
// the labels must say.
func TestRecordCheckoutLabels(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	file, err := filepath.Abs("../../internal/summary/testdata/bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	repo := newCheckout(t)
	t.Chdir(repo)
	var errb bytes.Buffer
	recordCheckout(ctx, path, []string{file}, "bench", "2026-01-02T03:04:05Z", &errb)
	if want := "kvb record: recorded bench.txt (run 1) in the history store " + path + "\n"; errb.String() != want {
		t.Fatalf("said %q, want %q", errb.String(), want)
	}
	s, err := history.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.List(ctx, []history.Label{{Key: "role", Value: "bench"}})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs with role=bench: %v, %v", runs, err)
	}
	head, err := git(ctx, "rev-parse", "HEAD")
	if err != nil || len(head) != 40 {
		t.Fatalf("the test's checkout: HEAD %q, %v", head, err)
	}
	// An untracked file is no change of the commit's tree.
	for k, want := range map[string]string{"commit": head, "commit-date": committed, "branch": "trunk", "dirty": "false", "date": "2026-01-02T03:04:05Z"} {
		if got := runs[0].Label(k); got != want {
			t.Errorf("label %s=%q, want %q", k, got, want)
		}
	}

	// A tracked file changed: dirty.
	if err := os.WriteFile(filepath.Join(repo, "tracked.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recordCheckout(ctx, path, []string{file}, "dirty", "x", io.Discard)
	if runs, err := s.List(ctx, []history.Label{{Key: "role", Value: "dirty"}}); err != nil || len(runs) != 1 {
		t.Errorf("runs with role=dirty: %d, %v; want 1", len(runs), err)
	} else if got := runs[0].Label("dirty"); got != "true" {
		t.Errorf("recorded with a tracked file changed: dirty=%q, want true", got)
	}

	// Without -date, the date is when the run last wrote the file.
	when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	mine := filepath.Join(t.TempDir(), "bench.txt")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(mine, when, when); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	recordCheckout(ctx, path, []string{mine}, "bench", "", &errb)
	if runs, err := s.List(ctx, []history.Label{{Key: "date", Value: "2026-03-04T05:06:07Z"}}); err != nil || len(runs) != 1 {
		t.Errorf("a file modified at %s, recorded without -date: runs with that date %v, %v; said %q", when, runs, err, errb.String())
	}

	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("BenchmarkX 1 notanumber ns/op\n"), 0o644)
	errb.Reset()
	recordCheckout(ctx, path, []string{bad, file}, "bench", "x", &errb)
	if !strings.Contains(errb.String(), bad+" was not recorded") || !strings.Contains(errb.String(), "recorded bench.txt (run 4)") {
		t.Errorf("a bad file beside a good one: said %q", errb.String())
	}
}

// committed is the committer date of newCheckout's commit, as %cI writes
// it; its author date is another.
const committed = "2026-01-01T12:00:00+01:00"

// newCheckout makes a git checkout in a new directory: tracked.txt
// committed on branch trunk, and an untracked file. git runs here without
// the user's or the system's configuration, and without what a git hook
// running the tests would point elsewhere (GIT_DIR and the like).
func newCheckout(t *testing.T) string {
	t.Helper()
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	repo := t.TempDir()
	for name, text := range map[string]string{"tracked.txt": "one\n", "untracked.txt": "notes\n"} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "trunk"}, {"add", "tracked.txt"}, {"commit", "-q", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=kvbench", "GIT_AUTHOR_EMAIL=kvbench@example.com", "GIT_AUTHOR_DATE=2025-12-01T10:00:00+01:00",
			"GIT_COMMITTER_NAME=kvbench", "GIT_COMMITTER_EMAIL=kvbench@example.com", "GIT_COMMITTER_DATE="+committed)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return repo
}
