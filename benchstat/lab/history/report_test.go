package history

import (
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/pagecheck"
	"github.com/kvbench/kvbench/benchstat/lab/internal/changepoint"
	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
	"github.com/kvbench/kvbench/benchstat/lab/internal/history/historytest"
)

// benchFile is the output of one make bench (-count 3), which the
// summary's and the report's tests read too.
const benchFile = "../../internal/summary/testdata/bench.txt"

const commitURL = "https://github.com/kvbench/kvbench/commit/%s"

var scale = historytest.Scale

// commitOf is the full commit hash of the i-th commit of testHistory.
func commitOf(i int) string { return fmt.Sprintf("%02d%038x", i, i) }

// testHistory is a history built from make bench's output: 20
// commits on main, added out of order, of which the 11th and later have
// Bolt's warm reads twice as slow (ns/op) and Pebble's a quarter faster
// (ops/s), and the 4th and later a newer Go; three releases of bbolt
// added out of version order, with Bolt's populate faster at each; and
// one run of another branch.
//
// The reports only read it, so every test shares one, built once into
// its own directory and removed by TestMain.
func testHistory(t testing.TB) string {
	t.Helper()
	shared.Do(func() {
		dir, err := os.MkdirTemp("", "kvbench-history-test")
		if err != nil {
			t.Fatal(err)
		}
		sharedDir = dir
		sharedDB = buildHistory(t, dir)
	})
	if sharedDB == "" {
		t.Fatal("the shared test history failed to build")
	}
	return sharedDB
}

var (
	shared              sync.Once
	sharedDir, sharedDB string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

func buildHistory(t testing.TB, dir string) string {
	t.Helper()
	b, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b)
	db := filepath.Join(dir, "history.db")
	add := func(name, text string, labels ...string) {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"add", file, "-history", db}
		for _, l := range labels {
			args = append(args, "-label", l)
		}
		if code, _, errs := runHistory(args...); code != 0 {
			t.Fatalf("add %s: %s", name, errs)
		}
	}
	for _, i := range []int{3, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 13, 15, 16, 17, 18, 20, 19} {
		text := raw
		if i >= 4 {
			text = strings.ReplaceAll(text, "\ngo: go1.26.8\n", "\ngo: go1.26.9\n")
		}
		if i >= 11 {
			text = scale(text, "BenchmarkReadRandomBolt/valsz=1024/cache=warm/", "ns/op", 2)
			text = scale(text, "BenchmarkReadRandomPebble/valsz=1024/cache=warm/", "ops/s", 1.25)
		}
		add(fmt.Sprintf("c%02d.txt", i), text, "branch=main", "commit="+commitOf(i),
			fmt.Sprintf("commit-date=2026-11-%02dT09:30:00+01:00", i))
	}
	for _, v := range []struct {
		version string
		factor  float64
	}{{"v1.10.0", 1}, {"v1.3.11", 1.3}, {"v1.4.0", 1.1}} {
		add("bbolt-"+v.version+".txt", scale(raw, "BenchmarkPopulateBolt/", "ns/op", v.factor),
			"branch=main", "series=release", "module=go.etcd.io/bbolt", "version="+v.version, "commit="+commitOf(30))
	}
	add("dev.txt", scale(raw, "BenchmarkReadRandomBolt/", "ns/op", 5), "branch=dev", "commit="+commitOf(99))
	return db
}

// pairs counts the distinct benchmark name and unit pairs of the file,
// apart from benchfmt: a benchmark line is name, iterations, then
// value-unit pairs.
func pairs(t *testing.T, file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 3 && strings.HasPrefix(l, "Benchmark") {
			for j := 3; j < len(f); j += 2 {
				seen[f[0]+" "+f[j]] = true
			}
		}
	}
	return len(seen)
}

// figure returns the chart figure whose id starts with prefix and whose
// SVG contains every one of has.
func figure(t *testing.T, doc, prefix string, has ...string) string {
	t.Helper()
	for _, m := range regexp.MustCompile(`(?s)<figure id="(`+regexp.QuoteMeta(prefix)+`[^"]*)".*?</figure>`).FindAllString(doc, -1) {
		ok := true
		for _, h := range has {
			ok = ok && strings.Contains(m, h)
		}
		if ok {
			return m
		}
	}
	t.Fatalf("no chart %s* with %q", prefix, has)
	return ""
}

// inOrder reports whether each of subs occurs in s after the one before.
func inOrder(s string, subs ...string) bool {
	at := 0
	for _, x := range subs {
		i := strings.Index(s[at:], x)
		if i < 0 {
			return false
		}
		at += i + len(x)
	}
	return true
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	db := testHistory(t)
	out := filepath.Join(dir, "history.html")
	code, stdout, errs := runHistory("report", "-history", db, "-label", "branch=main", "-o", out, "-commit_url", commitURL)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	series := 2 * pairs(t, benchFile) // over commits and over bbolt's releases
	if want := fmt.Sprintf("history: %s (23 runs, %d series, ", out, series); !strings.HasPrefix(stdout, want) {
		t.Errorf("report said %q, want it to start %q", stdout, want)
	}
	if want := fmt.Sprintf("23 runs, 1 machine, %d series", series); !strings.Contains(doc, want) {
		t.Errorf("the page does not say %q", want)
	}
	if !strings.Contains(doc, "<code>branch=main</code>") || !strings.Contains(doc, "<code>"+db+"</code>") {
		t.Error("the page does not name its store and filter")
	}

	// The change points: Bolt's two warm-read series regressed at the 11th
	// commit, Pebble's improved; nothing else moved.
	table := regexp.MustCompile(`(?s)<table data-table="changes">.*?</table>`).FindString(doc)
	rows := regexp.MustCompile(`(?s)<tr class="(\w+)">(.*?)</tr>`).FindAllStringSubmatch(table, -1)
	if len(rows) != 4 {
		t.Fatalf("%d change points, want 4:\n%s", len(rows), table)
	}
	commitLink := func(i int) string {
		return fmt.Sprintf(`<a href="https://github.com/kvbench/kvbench/commit/%s">%s</a>`, commitOf(i), commitOf(i)[:7])
	}
	for i, want := range []struct{ class, engine, unit, values, delta string }{
		{"regression", "Bolt", "ns/op", "1.13k → 2.25k", "+100.0%"},
		{"regression", "Bolt", "ns/op", "1.64k → 3.29k", "+100.0%"},
		{"improvement", "Pebble", "ops/s", "132k → 165k", "+25.0%"},
		{"improvement", "Pebble", "ops/s", "138k → 173k", "+25.0%"},
	} {
		class, row := rows[i][1], html.UnescapeString(rows[i][2])
		if class != want.class || !inOrder(row, "ReadRandom/valsz=1024/cache=warm/hit=63%/threads=", "<td>"+want.engine+"</td>",
			"<td>"+want.unit+"</td>", want.values, want.delta, "0.0002", commitLink(10), commitLink(11), `<a href="#c-readrandom-valsz-1024-cache-warm-hit-63-threads-1`) {
			t.Errorf("change row %d: %s %s, want %+v", i, class, row, want)
		}
	}
	regressions := regexp.MustCompile(`(?s)<p>Regressions only:</p>\s*<ul class="links">(.*?)</ul>`).FindStringSubmatch(doc)
	if regressions == nil || strings.Count(regressions[1], "<li>") != 2 ||
		!strings.Contains(html.UnescapeString(regressions[1]), "Bolt ReadRandom/valsz=1024/cache=warm/hit=63%/threads=1 ns/op +100.0%") {
		t.Errorf("regressions list: %q", regressions)
	}

	// Bolt's warm reads: the points in commit order, the newer Go marked
	// between the 3rd and 4th commits, the change point before the 11th.
	boltChart := figure(t, doc, "c-readrandom-valsz-1024-cache-warm-hit-63-threads-1-ns-op-", "ns/op, lower is better", "commit "+commitOf(1)[:7])
	var tips []string
	for _, m := range regexp.MustCompile(`<g><title>Bolt: ([^<]*)</title>`).FindAllStringSubmatch(boltChart, -1) {
		tips = append(tips, m[1])
	}
	if len(tips) != 20 {
		t.Fatalf("Bolt's line has %d points, want 20", len(tips))
	}
	for i, tip := range tips {
		median := "1.13k ns/op"
		if i >= 10 {
			median = "2.25k ns/op"
		}
		if !strings.HasPrefix(tip, median+", median of 3") || !strings.Contains(tip, "commit "+commitOf(i + 1)[:7]) ||
			!strings.Contains(tip, "bar: min to max ") || !strings.Contains(tip, "(3 values: no 95% interval)") ||
			!strings.Contains(tip, "go.etcd.io/bbolt v1.5.0") {
			t.Errorf("point %d of Bolt's line: %q", i, tip)
		}
	}
	if n := strings.Count(boltChart, `<g class="env">`); n != 1 || !strings.Contains(boltChart, "go1.26.8→go1.26.9") {
		t.Errorf("Bolt's chart has %d environment marks, want the one from go1.26.8 to go1.26.9", n)
	}
	if !strings.Contains(boltChart, `<g class="change"><title>Bolt regression: 1.13k → 2.25k ns/op (+100.0%`) {
		t.Error("Bolt's chart does not mark its change point")
	}

	// The release series: by semver, not by the order they were added.
	rel := figure(t, doc, "c-populate-valsz-1024-batch-1000-sync-false-ns-op-releases-", "ns/op, lower is better (releases)",
		"version of go.etcd.io/bbolt (semver order), suite at 3000000")
	if !inOrder(rel, ">v1.3.11<", ">v1.4.0<", ">v1.10.0<") {
		t.Error("the release chart's versions are not in semver order v1.3.11, v1.4.0, v1.10.0")
	}
	if strings.Contains(rel, `class="env"`) {
		t.Error("the release chart marks its own versions as environment changes")
	}

	checkWellFormed(t, doc)
	if strings.Contains(doc, commitOf(99)[:7]) {
		t.Error("the page shows the run of branch dev, which the filter leaves out")
	}
}

// checkWellFormed checks the page by its own markup: no outside
// references, every element it opens closed, every id once, every #link
// to an id of the page.
func checkWellFormed(t *testing.T, doc string) {
	t.Helper()
	if m := regexp.MustCompile(`(?i)\ssrc\s*=|@import|url\(`).FindString(doc); m != "" {
		t.Errorf("the page loads something from elsewhere: %q", m)
	}
	if !strings.HasPrefix(doc, "<!DOCTYPE html>") || !strings.Contains(doc, "<figure") {
		t.Error("the page is not an HTML document with charts")
	}
	for _, tag := range []string{"html", "body", "section", "table", "figure", "svg", "details", "ul", "nav", "g", "title", "text"} {
		if o, c := len(regexp.MustCompile(`<`+tag+`[\s>]`).FindAllString(doc, -1)), strings.Count(doc, "</"+tag+">"); o != c {
			t.Errorf("<%s>: %d opened, %d closed", tag, o, c)
		}
	}
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`\sid="([^"]+)"`).FindAllStringSubmatch(doc, -1) {
		if ids[m[1]] {
			t.Errorf("id %q twice", m[1])
		}
		ids[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(doc, -1) {
		switch h := m[1]; {
		case strings.HasPrefix(h, "#"):
			if !ids[h[1:]] {
				t.Errorf("link %s to no element of the page", h)
			}
		case strings.HasPrefix(h, "https://github.com/kvbench/kvbench/commit/"), strings.HasPrefix(h, "https://pkg.go.dev/"):
		default:
			t.Errorf("link %q is neither in the page, nor a commit, nor a release", h)
		}
	}
}

// Without -commit_url a commit is plain text; a release links to its
// module's page at that version.
func TestRunLink(t *testing.T) {
	c := &history.RunMeta{Run: history.Run{ID: 4}, Commit: commitOf(3), Dirty: true}
	if l := runLink(c, ""); l.Text != commitOf(3)[:7]+"+dirty" || l.Href != "" {
		t.Errorf("commit without -commit_url: %+v", l)
	}
	if l := runLink(c, commitURL); l.Href != "https://github.com/kvbench/kvbench/commit/"+commitOf(3) {
		t.Errorf("commit with -commit_url: %+v", l)
	}
	r := &history.RunMeta{Release: true, Module: "go.etcd.io/bbolt", Version: "v1.4.0"}
	if l := runLink(r, commitURL); l.Text != "v1.4.0" || l.Href != "https://pkg.go.dev/go.etcd.io/bbolt@v1.4.0" {
		t.Errorf("release: %+v", l)
	}
}

// A release series' change point links both versions to pkg.go.dev. The
// series has too few points for benchstat/lab/internal/changepoint, so the
// test places the change itself.
func TestReleaseChangeRow(t *testing.T) {
	db := testHistory(t)
	out := filepath.Join(t.TempDir(), "h.html")
	defer func(d func([]float64, []bool, uint64) []changepoint.Change) { detect = d }(detect)
	// A release series is tested on its values (3 a release here), a
	// change allowed only where a release starts.
	detect = func(xs []float64, splits []bool, _ uint64) []changepoint.Change {
		if len(xs) == 9 && splits[3] && !splits[2] && xs[0] != xs[3] {
			return []changepoint.Change{{Index: 3, P: 0.004, Before: xs[0], After: xs[3]}}
		}
		return nil
	}
	if code, _, errs := runHistory("report", "-history", db, "-o", out); code != 0 {
		t.Fatal(errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?s)<tr class="improvement">.*?</tr>`).FindString(string(b))
	if !inOrder(row, "Populate/valsz=1024/batch=1000/sync=false", "<td>Bolt</td>", "<td>ns/op</td>", "-15.4%", "0.004",
		`<a href="https://pkg.go.dev/go.etcd.io/bbolt@v1.3.11">v1.3.11</a>`, `<a href="https://pkg.go.dev/go.etcd.io/bbolt@v1.4.0">v1.4.0</a>`) {
		t.Errorf("release change row: %s", row)
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	db := testHistory(t)
	out := filepath.Join(dir, "none.html")
	if code, _, errs := runHistory("report", "-history", db, "-label", "branch=none", "-o", out); code != 1 || !strings.Contains(errs, "no runs with branch=none") {
		t.Errorf("report of no runs: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a report of no runs wrote %s", out)
	}
	for _, args := range [][]string{
		{"report", "-history", db, "-bogus", "-o", out},
		{"report", "-history", db, "extra", "-o", out},
		{"report", "-history", db, "-commit_url", "https://example.com/commit", "-o", out},
	} {
		if code, _, errs := runHistory(args...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d, %q; want 2 and a message", args, code, errs)
		}
	}
	missing := filepath.Join(dir, "missing.db")
	if code, _, errs := runHistory("report", "-history", missing, "-o", out); code != 1 || !strings.Contains(errs, "no history at") {
		t.Errorf("report of a missing database: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed report wrote %s", out)
	}
}

// TestHistoryPage loads the report of testHistory in headless Chromium at
// a laptop's widths: the change table and every chart, folded or not,
// render with a size, and no text overflows (benchstat/internal/pagecheck
// says when it is skipped: where chromium is not installed; make
// report-deps installs it). make lab-test runs it.
func TestHistoryPage(t *testing.T) {
	bin := pagecheck.Chromium(t)
	pg := buildTestPage(t)
	if len(pg.Charts) < 100 {
		t.Fatalf("%d charts", len(pg.Charts))
	}
	pagecheck.Check(t, bin, pg.HTML, pg.Tables, pg.Charts, 1280, 1024)
}

func buildTestPage(t *testing.T) *page {
	t.Helper()
	db := testHistory(t)
	s, err := history.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	filter := []history.Label{{Key: "branch", Value: "main"}}
	h, err := s.Load(t.Context(), filter)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := renderPage(h, buildModel(h), s.Path(), "branch=main", commitURL)
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

var demo = flag.String("demo", "", "write the report of the test history to this file (make history-screenshot)")

// TestDemoPage writes the test history's page for make
// history-screenshot; without -demo it does nothing.
func TestDemoPage(t *testing.T) {
	if *demo == "" {
		t.Skip("no -demo FILE")
	}
	if err := os.WriteFile(*demo, buildTestPage(t).HTML, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Each machine has a section of its own, and its own series.
func TestReportMachines(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	for _, labels := range [][]string{{}, {"-label", "machine=ci-large"}} {
		args := append([]string{"add", benchFile, "-history", db}, labels...)
		if code, _, errs := runHistory(args...); code != 0 {
			t.Fatal(errs)
		}
	}
	out := filepath.Join(dir, "h.html")
	if code, _, errs := runHistory("report", "-history", db, "-o", out); code != 0 {
		t.Fatal(errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if want := fmt.Sprintf("2 runs, 2 machines, %d series", 2*pairs(t, benchFile)); !strings.Contains(doc, want) {
		t.Errorf("the page does not say %q", want)
	}
	for _, m := range []string{"AMD EPYC x2, /dev/vda", "ci-large"} {
		if !regexp.MustCompile(`<section id="m-[^"]+">\s*<h2>` + regexp.QuoteMeta(m) + `</h2>`).MatchString(doc) {
			t.Errorf("no section for machine %q", m)
		}
	}
	checkWellFormed(t, doc)
}

// A change is a regression or an improvement by its unit's good
// direction, and just a change when the unit has none; regressions come
// first, the largest first.
func TestChangeClasses(t *testing.T) {
	defer func(d func([]float64, []bool, uint64) []changepoint.Change) { detect = d }(detect)
	detect = func(xs []float64, _ []bool, _ uint64) []changepoint.Change {
		return []changepoint.Change{{Index: 3, P: 0.005, Before: xs[0], After: xs[3]}}
	}
	runs := make([]*history.RunMeta, 6)
	for i := range runs {
		runs[i] = &history.RunMeta{Run: history.Run{ID: int64(i + 1)}}
	}
	chartOf := func(better int, after float64) *chart {
		s := &history.Series{}
		for i, r := range runs {
			v := 100.0
			if i >= 3 {
				v = after
			}
			s.Points = append(s.Points, history.Point{Run: r, Median: v})
		}
		return &chart{better: better, lines: []*line{{engine: "Bolt", label: "Bolt", series: s}}}
	}
	var rows []*changeRow
	for _, c := range []struct {
		better      int
		after       float64
		class, text string
	}{
		{-1, 110, "regression", "+10.0%"},
		{1, 110, "improvement", "+10.0%"},
		{0, 110, "change", "+10.0%"},
		{1, 70, "regression", "-30.0%"},
	} {
		ch := chartOf(c.better, c.after)
		got := detectChanges(ch, ch.lines[0], nil)
		if len(got) != 1 || got[0].class != c.class || deltaText(got[0].delta) != c.text || got[0].from != runs[2] || got[0].to != runs[3] {
			t.Errorf("better %d, 100 → %g: %+v, want a %s of %s between runs 3 and 4", c.better, c.after, got, c.class, c.text)
		}
		rows = append(rows, got...)
	}
	sortChanges(rows)
	var order []string
	for _, r := range rows {
		order = append(order, r.class+" "+deltaText(r.delta))
	}
	if want := "regression -30.0%,regression +10.0%,improvement +10.0%,change +10.0%"; strings.Join(order, ",") != want {
		t.Errorf("order %q, want %q", order, want)
	}
}

// A change that slows every engine at once (the harness, the machine)
// leaves each engine's series with the run drift; the run drift's own
// chart keeps it, as a regression between the right commits.
func TestSharedSlowdownShowsAsRunDrift(t *testing.T) {
	b, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	// 7 commits before and 7 after: 3,432 ways to split 14 points, enough
	// for p <= 0.001 (4 and 4 give 70, never enough).
	for i := 1; i <= 14; i++ {
		text := string(b)
		if i >= 8 {
			// Every engine's benchmark 10 % slower: times up, rates down.
			for _, fam := range []string{"BenchmarkPopulate", "BenchmarkReadRandom", "BenchmarkScan", "BenchmarkOpen"} {
				for _, u := range []string{"ns/op", "cpu-ns/op", "p50-ns", "p99-ns", "p999-ns"} {
					text = scale(text, fam, u, 1.1)
				}
				for _, u := range []string{"ops/s", "MB/s", "keys/s", "first-keys/s", "last-keys/s"} {
					text = scale(text, fam, u, 1/1.1)
				}
			}
		}
		file := filepath.Join(dir, fmt.Sprintf("c%d.txt", i))
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := runHistory("add", file, "-history", db, "-label", "commit="+commitOf(i),
			"-label", fmt.Sprintf("commit-date=2026-11-%02dT09:30:00+01:00", i)); code != 0 {
			t.Fatal(errs)
		}
	}
	out := filepath.Join(dir, "h.html")
	if code, _, errs := runHistory("report", "-history", db, "-o", out); code != 0 {
		t.Fatal(errs)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?s)<tr class="(regression|improvement|change)">.*?</tr>`).FindAllString(string(page), -1)
	if len(rows) != 1 || !inOrder(rows[0], driftFamily, "ns/op drift", "10.0%", commitOf(7)[:7], commitOf(8)[:7]) {
		t.Fatalf("change rows %q: want only the run drift's +10%% between commits 7 and 8", rows)
	}
}
