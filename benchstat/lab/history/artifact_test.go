package history

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runArtifact runs kvb history artifact and returns its exit status and
// stderr.
func runArtifact(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, _, errs := runHistory(append([]string{"artifact"}, args...)...)
	return code, errs
}

// compareDir is a kvb compare output directory of -mode both: each side's
// file is the suite's testdata file.
func compareDir(t *testing.T) (string, []byte) {
	t.Helper()
	raw, err := os.ReadFile(suiteFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "compare")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"base.txt", "head.txt", "sim-base.txt", "sim-head.txt", "gate.md"} {
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, raw
}

// startWith checks that each file of out is its prefix, then raw.
func startWith(t *testing.T, out string, prefixes map[string]string, raw []byte) {
	t.Helper()
	for name, prefix := range prefixes {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != prefix+string(raw) {
			t.Errorf("%s starts %q, want %q then the results", name, got[:min(len(got), len(prefix)+40)], prefix)
		}
	}
}

// Each side's copy is its results behind configuration lines, and add
// keeps those as labels: list finds and shows the runs by them.
func TestHistoryArtifactAdds(t *testing.T) {
	cmp, raw := compareDir(t)
	out := filepath.Join(t.TempDir(), "history")
	code, errs := runArtifact(t, "-mode", "both", "-label", "machine=ci-arm64", "-label", "date=2026-01-02T03:04:05Z",
		"-base", "commit=aaa111", "-base", "branch=main", "-head", "commit=bbb222", "-head", "branch=feature", "-head", "ref=HEAD",
		out, cmp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := map[string]string{
		"base.txt":     "role: base\nmode: time\nmachine: ci-arm64\ncommit: aaa111\nbranch: main\ndate: 2026-01-02T03:04:05Z\n",
		"sim-head.txt": "role: head\nmode: sim\nmachine: ci-arm64\ncommit: bbb222\nbranch: feature\nref: HEAD\ndate: 2026-01-02T03:04:05Z\n",
	}
	ents, err := os.ReadDir(out)
	if err != nil || len(ents) != 4 {
		t.Fatalf("%s holds %d files (%v), want base, head, sim-base, sim-head", out, len(ents), err)
	}
	startWith(t, out, want, raw)

	db := filepath.Join(t.TempDir(), "h.db")
	files, _ := filepath.Glob(filepath.Join(out, "*.txt"))
	if code, _, errs := runHistory(append([]string{"add", "-history", db}, files...)...); code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	if _, list, _ := runHistory("list", "-history", db, "-label", "machine=ci-arm64"); strings.Count(list, "\n") != 5 {
		t.Errorf("list -label machine=ci-arm64:\n%s", list)
	}
	_, list, errs := runHistory("list", "-history", db, "-label", "mode=sim", "-label", "role=head")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Local().Format(time.DateTime)
	row := regexp.MustCompile(`^\d+ +` + regexp.QuoteMeta(date) + ` +` + regexp.QuoteMeta(filepath.Join(out, "sim-head.txt")) +
		` +head +bbb222 +feature +ci-arm64 +go1\.26\.8 +72$`)
	if len(lines) != 2 || !row.MatchString(lines[1]) {
		t.Errorf("list -label mode=sim -label role=head (%s):\n%s\nwant a row matching %s", errs, list, row)
	}
}

// Usage errors exit 2 and write nothing.
func TestHistoryArtifactUsage(t *testing.T) {
	cmp, _ := compareDir(t)
	empty := t.TempDir()
	out := filepath.Join(t.TempDir(), "history")
	for _, args := range [][]string{
		{},
		{out},
		{out, cmp, "extra"},
		{"-mode", "fast", out, cmp},
		{"-label", "machine", out, cmp},
		{"-label", "Machine=x", out, cmp},
		{"-head", "the ref=x", out, cmp},
		{"-bogus", out, cmp},
		{out, filepath.Join(cmp, "missing")},
		{out, empty},
	} {
		if code, errs := runArtifact(t, args...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d, %q; want 2 and a message", args, code, errs)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a usage error wrote %s: %v", out, err)
	}
}

// A file in OUT_DIR that no artifact wrote stops it before it writes
// anything; its own copies are replaced.
func TestHistoryArtifactKeepsOthersFiles(t *testing.T) {
	cmp, _ := compareDir(t)
	out := t.TempDir()
	if code, errs := runArtifact(t, out, cmp); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if code, errs := runArtifact(t, "-label", "machine=b", out, cmp); code != 0 {
		t.Fatalf("again: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "base.txt")); !strings.Contains(string(b), "\nmachine: b\n") {
		t.Errorf("the second run did not replace its own copy:\n%.200s", b)
	}
	mine := filepath.Join(out, "head.txt")
	if err := os.WriteFile(mine, []byte("my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, "base.txt"))
	if code, errs := runArtifact(t, "-label", "machine=c", out, cmp); code != 2 || !strings.Contains(errs, mine) {
		t.Errorf("over a file of its own: exit %d, %q; want 2 naming %s", code, errs, mine)
	}
	after, _ := os.ReadFile(filepath.Join(out, "base.txt"))
	if b, _ := os.ReadFile(mine); string(b) != "my notes\n" || !bytes.Equal(before, after) {
		t.Errorf("a refused run wrote: head.txt %q, base.txt changed %v", b, !bytes.Equal(before, after))
	}
}

// What kvb compare's gate.json says of each side comes first, and its
// modes are -mode's default; a flag's pair comes after, and a later line
// of a key wins.
func TestHistoryArtifactReadsGateJSON(t *testing.T) {
	cmp, raw := compareDir(t)
	for _, f := range []string{"sim-base.txt", "sim-head.txt"} {
		os.Remove(filepath.Join(cmp, f))
	}
	j := `{"base": "main (aaa1111)", "head": "bbb2222", "modes": [{"mode": "sim", "failed": false, "failures": null}],
  "sides": {"base": {"commit": "aaa111", "date": "2026-01-02T03:04:05Z", "ref": "main"},
            "head": {"commit": "bbb222", "date": "2026-01-02T03:04:05Z", "ref": "bbb2222"}}}`
	if err := os.WriteFile(filepath.Join(cmp, "gate.json"), []byte(j), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "history")
	if code, errs := runArtifact(t, "-head", "commit=ccc333", out, cmp); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	startWith(t, out, map[string]string{
		"base.txt": "role: base\nmode: sim\ncommit: aaa111\nref: main\ndate: 2026-01-02T03:04:05Z\n",
		"head.txt": "role: head\nmode: sim\ncommit: bbb222\nref: bbb2222\ncommit: ccc333\ndate: 2026-01-02T03:04:05Z\n",
	}, raw)
	db := filepath.Join(t.TempDir(), "h.db")
	if code, _, errs := runHistory("add", "-history", db, filepath.Join(out, "head.txt")); code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	for label, n := range map[string]int{"commit=ccc333": 1, "commit=bbb222": 0} {
		if _, list, _ := runHistory("list", "-history", db, "-label", label); strings.Count(list, "\n") != n+min(n, 1) {
			t.Errorf("list -label %s, want %d runs:\n%s", label, n, list)
		}
	}
}
