package history

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestAddListExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	f := suiteFile(t)
	if want := countValues(f.Raw); len(f.Results) != want || want == 0 {
		t.Fatalf("parsed %d results, the file has %d values", len(f.Results), want)
	}
	a, err := s.Add(ctx, []*File{f}, []Label{{"commit", "aad317f"}, {"role", "base"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 1 || a.Results != len(f.Results) {
		t.Fatalf("added %+v, want 1 run of %d results", a, len(f.Results))
	}
	s.Close()

	// Everything comes back from a fresh open.
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("list: %d runs, want 1", len(runs))
	}
	r := runs[0]
	if r.ID != a.Runs[0] || r.File != testdataFile || r.Role != "base" || r.Results != len(f.Results) {
		t.Errorf("run = %+v", r)
	}
	for key, want := range map[string]string{
		"commit":       "aad317f",                 // -label
		"cpu-model":    "AMD EPYC",                // machine key, configuration line
		"kernel":       "Linux 6.18.44-fc-v657",   // machine key
		"engine-bolt":  "go.etcd.io/bbolt v1.5.0", // engine version
		"rocksdb-lib":  "7.8.3",                   // library version
		"keys":         "10000",                   // a suite flag
		"gate":         "ns/op cpu-ns/op p50-ns B/op allocs/op read-B/op",
		"fixture-bolt": "go.etcd.io/bbolt v1.5.0 (bolt-k10000-v256-s1-r1-cnone-f1-batch1000-ver7686dfdd-bolt_freelistmap-bolt_freelist_syncfalse)",
	} {
		if got := r.Label(key); got != want {
			t.Errorf("label %s = %q, want %q", key, got, want)
		}
	}
	if !strings.HasPrefix(r.Label("settings-bolt"), "sync=false nosync=true") {
		t.Errorf("settings-bolt = %q", r.Label("settings-bolt"))
	}

	// One value, iterations and unit as written.
	var v float64
	var iters int
	err = s.db.QueryRow(`SELECT value, iters FROM results WHERE run_id = ? AND name = ? AND unit = ?`,
		r.ID, "BenchmarkReadRandomBolt/valsz=256/cache=warm/hit=63%/threads=1-2", "ns/op").Scan(&v, &iters)
	if err != nil {
		t.Fatal(err)
	}
	if v != 185.4 || iters != 285177 {
		t.Errorf("bolt ns/op = %v over %d iterations, want 185.4 over 285177", v, iters)
	}

	got, err := s.Export(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, f.Raw) {
		t.Errorf("export differs from the file added (%d bytes, want %d)", len(got), len(f.Raw))
	}
	if _, err := s.Export(ctx, r.ID+1); !errors.Is(err, ErrNoRun) {
		t.Errorf("export of a missing run: %v, want ErrNoRun", err)
	}
}

func TestListFiltersByLabel(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	f := suiteFile(t)
	for _, ls := range [][]Label{
		{{"commit", "a"}, {"machine", "x"}},
		{{"commit", "b"}, {"machine", "x"}},
		{{"commit", "b"}, {"machine", "y"}},
	} {
		if _, err := s.Add(ctx, []*File{f}, ls); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		filter []Label
		want   []int64
	}{
		{nil, []int64{1, 2, 3}},
		{[]Label{{"commit", "a"}}, []int64{1}},
		{[]Label{{"machine", "x"}}, []int64{1, 2}},
		{[]Label{{"commit", "b"}, {"machine", "y"}}, []int64{3}},
		{[]Label{{"commit", "a"}, {"machine", "y"}}, nil},
		{[]Label{{"cpus", "2"}}, []int64{1, 2, 3}}, // a configuration line
		{[]Label{{"cpus", "64"}}, nil},
	} {
		runs, err := s.List(ctx, c.filter)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		if len(ids) != len(c.want) || (len(ids) > 0 && !equal(ids, c.want)) {
			t.Errorf("list %v = %v, want %v", c.filter, ids, c.want)
		}
	}
}

func equal(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestMalformedFileNamesFileAndLine(t *testing.T) {
	raw, err := os.ReadFile(testdataFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	// A benchmark line with a value and no unit, as line 70.
	bad := strings.Join(lines[:69], "") + "BenchmarkBroken-2 \t 100 \t 12.5 ns/op \t 7\n" + strings.Join(lines[69:], "")
	_, err = Parse("bad.txt", []byte(bad))
	if err == nil || !strings.HasPrefix(err.Error(), "bad.txt:70: ") {
		t.Fatalf("Parse = %v, want an error at bad.txt:70", err)
	}
	if _, err := Parse("empty.txt", []byte("goos: linux\nPASS\n")); err == nil || !strings.Contains(err.Error(), "empty.txt: no benchmark results") {
		t.Errorf("Parse of a file with no results = %v", err)
	}
}

// An add whose transaction never commits leaves nothing: here its
// context ends after every row is inserted, before the commit.
func TestUncommittedAddLeavesNothing(t *testing.T) {
	s, _ := openTemp(t)
	f := suiteFile(t)
	if _, err := s.Add(context.Background(), []*File{f}, nil); err != nil {
		t.Fatal(err)
	}
	before := [3]int{count(t, s, "runs"), count(t, s, "labels"), count(t, s, "results")}
	ctx, cancel := context.WithCancel(context.Background())
	testHookBeforeCommit = cancel
	defer func() { testHookBeforeCommit = nil }()
	if _, err := s.Add(ctx, []*File{f, f}, []Label{{"commit", "lost"}}); err == nil {
		t.Fatal("Add committed after its context ended")
	}
	after := [3]int{count(t, s, "runs"), count(t, s, "labels"), count(t, s, "results")}
	if after != before {
		t.Errorf("runs, labels, results = %v after the failed add, want %v", after, before)
	}
}

// Configuration lines put in front of a suite file (a workflow's machine,
// commit and date) are labels of origin file, and the role column takes
// the role line when no -label gives one.
func TestPrefixedConfigLinesAreLabels(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	raw, err := os.ReadFile(testdataFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("head.txt", append([]byte("role: head\nmachine: ci-arm64\ncommit-date: 2026-01-02T03:04:05+01:00\n"), raw...))
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Add(ctx, []*File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.List(ctx, []Label{{"machine", "ci-arm64"}})
	if err != nil || len(runs) != 1 || runs[0].ID != a.Runs[0] || runs[0].Role != "head" {
		t.Fatalf("list -label machine=ci-arm64: %+v, %v", runs, err)
	}
	var origin string
	if err := s.db.QueryRow(`SELECT origin FROM labels WHERE run_id = ? AND key = 'commit-date'`, a.Runs[0]).Scan(&origin); err != nil || origin != "file" {
		t.Errorf("commit-date label: origin %q, %v; want file", origin, err)
	}
	if got := runs[0].Label("commit-date"); got != "2026-01-02T03:04:05+01:00" {
		t.Errorf("commit-date = %q", got)
	}
}
