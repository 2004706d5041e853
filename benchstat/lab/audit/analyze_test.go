package audit

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two engines, three rounds. At the baseline Bolt scans in 100 ns and
// Badger in 300 (Bolt ranks 1st); Badger reads in 200 ns, Bolt in 400.
// Badger with setting "fast scans": scans 50 ns (300/50 = 6x, it
// overtakes Bolt: decides a rank), reads 210 (+5 %, no rank change).
// Badger with "slight": scans 290 (-3 %), nothing moves.
const (
	baseBadger = `audit-engine: Badger
audit-setting: baseline

BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 290 ns/op
BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 300 ns/op
BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 310 ns/op
BenchmarkReadRandomBadger/valsz=1024/threads=1/block=4KiB-2 10 200 ns/op
BenchmarkReadRandomBadger/valsz=1024/threads=1/block=4KiB-2 10 199 ns/op
BenchmarkReadRandomBadger/valsz=1024/threads=1/block=4KiB-2 10 201 ns/op
`
	baseBolt = `audit-engine: Bolt
audit-setting: baseline

BenchmarkScanBolt/valsz=1024/threads=1-2 10 100 ns/op
BenchmarkScanBolt/valsz=1024/threads=1-2 10 101 ns/op
BenchmarkScanBolt/valsz=1024/threads=1-2 10 99 ns/op
BenchmarkReadRandomBolt/valsz=1024/threads=1-2 10 400 ns/op
BenchmarkReadRandomBolt/valsz=1024/threads=1-2 10 400 ns/op
BenchmarkReadRandomBolt/valsz=1024/threads=1-2 10 400 ns/op
`
	fastScans = `audit-engine: Badger
audit-setting: fast scans
audit-flags: -fast

BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 50 ns/op
BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 49 ns/op
BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 51 ns/op
BenchmarkReadRandomBadger/valsz=1024/threads=1/block=4KiB-2 10 210 ns/op
BenchmarkReadRandomBadger/valsz=1024/threads=1/block=4KiB-2 10 210 ns/op
BenchmarkReadRandomBadger/valsz=1024/threads=1/block=4KiB-2 10 210 ns/op
`
	slight = `audit-engine: Badger
audit-setting: slight
audit-flags: -slight

BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 290 ns/op
BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 291 ns/op
BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 289 ns/op
`
)

func writeFiles(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFindings(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"base-Badger.txt": baseBadger, "base-Bolt.txt": baseBolt,
		"setting-0.txt": fastScans, "setting-1.txt": slight,
	})
	res, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs := res.findings()
	if len(fs) != 2 {
		t.Fatalf("%d findings, want 2", len(fs))
	}
	fast, sl := fs[0], fs[1]
	if fast.side.setting != "fast scans" || sl.side.setting != "slight" {
		t.Fatalf("findings in order %q, %q", fast.side.setting, sl.side.setting)
	}
	// Scan: 50/300-1 = -83.3 %; ReadRandom: 210/200-1 = +5 %; the median
	// of two changes is their mean, -39.2 %.
	if fast.rows != 2 || fast.movedRows != 1 {
		t.Errorf("fast scans: %d rows, %d moved; want 2, 1", fast.rows, fast.movedRows)
	}
	if !near(fast.largestChange, -0.8333) || fast.largest != "Scan t=1" {
		t.Errorf("fast scans: largest %s %v, want Scan t=1 -0.833", fast.largest, fast.largestChange)
	}
	if !near(fast.medianChange, -0.3917) {
		t.Errorf("fast scans: median change %v, want -0.392", fast.medianChange)
	}
	if len(fast.rankChanges) != 1 || fast.rankChanges[0] != "Scan t=1 2→1 of 2" || !fast.decidesRank {
		t.Errorf("fast scans: rank changes %q, decides %v; want Scan 2→1, true", fast.rankChanges, fast.decidesRank)
	}
	if sl.movedRows != 0 || len(sl.rankChanges) != 0 || sl.decidesRank || !near(sl.medianChange, -0.0333) {
		t.Errorf("slight: moved %d, ranks %q, decides %v, change %v; want 0, none, false, -3.3 %%", sl.movedRows, sl.rankChanges, sl.decidesRank, sl.medianChange)
	}
	md := res.markdown(io.Discard)
	for _, want := range []string{"| Badger | fast scans (`-fast`) | 1 of 2 | -39 % | Scan t=1 -83 % | Scan t=1 2→1 of 2 | **yes** |",
		"| Badger | slight (`-slight`) | 0 of 1 | -3 % | — | none | no |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

// A change of more than 1.5x that changes no rank does not decide one; a
// rank change by less than 1.5x does not either, nor one whose rounds
// overlap the baseline's.
func TestDecidesNeedsBoth(t *testing.T) {
	scan := func(setting string, ns ...string) string {
		out := "audit-engine: Badger\naudit-setting: " + setting + "\naudit-flags: -x\n\n"
		for _, v := range ns {
			out += "BenchmarkScanBadger/valsz=1024/threads=1/block=4KiB-2 10 " + v + " ns/op\n"
		}
		return out
	}
	closeBolt := strings.NewReplacer(" 100 ns", " 280 ns", " 101 ns", " 281 ns", " 99 ns", " 279 ns").Replace(baseBolt)
	for _, c := range []struct {
		name, bolt, flip string
		ranks            int
	}{
		{"2x slower, 2nd either way", baseBolt, scan("big", "600", "610", "590"), 0},
		{"-10 %, overtakes Bolt at 280", closeBolt, scan("small", "270", "271", "269"), 1},
		// Median 65 ns would overtake Bolt 4.6x, but one round (295)
		// lies inside the baseline's 290-310: noise could make it.
		{"overlapping rounds", baseBolt, scan("noisy", "60", "65", "295"), 0},
	} {
		dir := writeFiles(t, map[string]string{"base-Badger.txt": baseBadger, "base-Bolt.txt": c.bolt, "setting-0.txt": c.flip})
		res, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		f := res.findings()[0]
		if f.decidesRank || len(f.rankChanges) != c.ranks {
			t.Errorf("%s: decides %v, rank changes %q; want false, %d", c.name, f.decidesRank, f.rankChanges, c.ranks)
		}
	}
}

func TestRowKey(t *testing.T) {
	for _, c := range []struct{ name, engine, want string }{
		{"BenchmarkReadRandomBadger/valsz=1024/cache=warm/threads=2/block=4KiB-2", "Badger", "ReadRandom/valsz=1024/cache=warm/threads=2"},
		{"ReadRandomBolt/valsz=1024/cache=warm/threads=2-2", "Bolt", "ReadRandom/valsz=1024/cache=warm/threads=2"},
		{"BenchmarkYCSBRocksDB/valsz=1024/workload=A/dist=zipf/threads=1/block=4KiB", "RocksDB", "YCSB/valsz=1024/workload=A/dist=zipf/threads=1"},
	} {
		got, ok := rowKey(c.name, c.engine)
		if !ok || got != c.want {
			t.Errorf("rowKey(%s) = %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
	if _, ok := rowKey("BenchmarkScanPebble/valsz=1", "Badger"); ok {
		t.Error("a Pebble result read as Badger's")
	}
}

func TestRewriteDoc(t *testing.T) {
	dir := writeFiles(t, map[string]string{"d.md": "a\n" + docBegin + "\nold\n" + docEnd + "\nz\n"})
	p := filepath.Join(dir, "d.md")
	if err := rewriteDoc(p, "new\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if want := "a\n" + docBegin + "\nnew\n" + docEnd + "\nz\n"; string(b) != want {
		t.Errorf("got %q, want %q", b, want)
	}
	if err := rewriteDoc(filepath.Join(dir, "d.md"), "x"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte("no markers\n"), 0o644)
	if err := rewriteDoc(p, "x"); err == nil {
		t.Error("a file without markers was rewritten")
	}
}

func near(a, b float64) bool { return a-b < 0.001 && b-a < 0.001 }

// A rerun into a directory holding a file of the same name that no audit
// wrote stops before running anything, and leaves the file alone.
func TestRunKeepsForeignFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{"base-Bolt.txt": "my notes\n"})
	r := runner{bin: "/nonexistent", out: dir, rounds: 1, log: io.Discard}
	err := r.run([]string{"Bolt"})
	if err == nil || !strings.Contains(err.Error(), "not an audit's results file") {
		t.Fatalf("run over a foreign file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "base-Bolt.txt")); string(b) != "my notes\n" {
		t.Errorf("the foreign file became %q", b)
	}
}

// TestUsage: what is missing or wrong is said before anything runs.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-bin is required"},
		{[]string{"-bin", "x", "-rounds", "0"}, "-rounds must be at least 1"},
		{[]string{"-analyze", "d", "extra"}, `unexpected argument "extra"`},
	} {
		var out, errb strings.Builder
		if code := Command.Run(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}
