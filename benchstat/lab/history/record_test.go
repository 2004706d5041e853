package history

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
)

// TestRecordCheckoutLabels: a run's file goes into the store with the
// checkout's labels, and one line says where; a file that does not parse
// is reported, and the others are recorded.
func TestRecordCheckoutLabels(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	var errb bytes.Buffer
	file := "../../internal/summary/testdata/bench.txt"
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
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	for k, want := range map[string]string{"commit": head, "date": "2026-01-02T03:04:05Z"} {
		if got := r.Label(k); got != want {
			t.Errorf("label %s=%q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"commit-date", "branch", "dirty"} {
		if r.Label(k) == "" || r.Label(k) == "none" {
			t.Errorf("label %s=%q", k, r.Label(k))
		}
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
	if !strings.Contains(errb.String(), bad+" was not recorded") || !strings.Contains(errb.String(), "recorded bench.txt (run 3)") {
		t.Errorf("a bad file beside a good one: said %q", errb.String())
	}
}
