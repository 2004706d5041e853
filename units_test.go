package kvbench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/measure"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// metricUnit says how to read one metric the suite reports: which way is
// better and whether repeated runs give exactly the same value. benchstat
// and the gate (benchstat/gate) read both from the Unit lines printUnits
// writes.
type metricUnit struct {
	unit   string
	better string // "higher", "lower", or "" when the metric has no good direction
	exact  bool   // the same data and code always give the same value
}

// metricUnits lists every metric any benchmark of the suite reports.
// ns/op, MB/s, B/op and allocs/op need no entry: benchfmt knows them.
//
// No metric is declared exact today, because none is: between identical
// runs write-amp moves in the fourth digit (compaction timing), Pebble's
// space-amp ranges from 2.7 to 3.9 (files still being deleted after Flush),
// allocs/op flips between neighbouring integers (Badger at 16 threads: 15
// or 16), and hit% depends on b.N. A metric that is exact gets exact: true
// and the gate fails on any worsening of it.
var metricUnits = []metricUnit{
	{unit: "ops/s", better: "higher"},
	{unit: "keys/s", better: "higher"},
	{unit: "knee-ops/s", better: "higher"},
	{unit: "achieved-ops/s", better: "higher"},
	{unit: "cpu-ns/op", better: "lower"},
	{unit: "read-B/op", better: "lower"},
	{unit: "read-MB", better: "lower"},
	{unit: "write-amp", better: "lower"},
	{unit: "space-amp", better: "lower"},
	{unit: "peak-rss-MB", better: "lower"},
	{unit: "rss-MB", better: "lower"},
	{unit: "faults", better: "lower"},
	{unit: "p50-ns", better: "lower"},
	{unit: "p90-ns", better: "lower"},
	{unit: "p99-ns", better: "lower"},
	{unit: "p999-ns", better: "lower"},
	{unit: "p9999-ns", better: "lower"},
	{unit: "max-ns", better: "lower"},
	{unit: "records/s", better: "higher"},
	{unit: "write-ops/s", better: "higher"},
	{unit: "knee-p99-ns", better: "lower"},
	{unit: "lag-p99-ns", better: "lower"},
	{unit: "write-p99-ns", better: "lower"},
	{unit: "open-read-ns", better: "lower"},
	{unit: "exit-ns", better: "lower"},
	{unit: "all-s", better: "lower"},
	{unit: "fsync-ms", better: "lower"},
	{unit: "read-KB/op", better: "lower"},
	{unit: "open-read-KB", better: "lower"},
	{unit: "majflt/op", better: "lower"},
	{unit: "minflt/op", better: "lower"},
	{unit: "peak-rss-KB", better: "lower"},
	{unit: "build-rss-MB", better: "lower"},
	{unit: "rss-grow-MB", better: "lower"},
	// Informational: set by flags or by the data, not better either way.
	{unit: "hit%"},
	{unit: "keys/op"},
	{unit: "values/op"},
	{unit: "file-MiB"},
	{unit: "cached-KB"},        // how warm a cold start really was
	{unit: "cold-resident-MB"}, // what eviction left in the page cache
}

// printUnits writes one benchfmt Unit line per metric with metadata, e.g.
// "Unit ops/s better=higher".
func printUnits(w io.Writer) { writeUnits(w, metricUnits) }

func writeUnits(w io.Writer, units []metricUnit) {
	for _, u := range units {
		var kv []string
		if u.better != "" {
			kv = append(kv, "better="+u.better)
		}
		if u.exact {
			kv = append(kv, "assume=exact")
		}
		if len(kv) > 0 {
			fmt.Fprintf(w, "Unit %s %s\n", u.unit, strings.Join(kv, " "))
		}
	}
}

// reportedUnit matches the unit literal of a ReportMetric call.
var reportedUnit = regexp.MustCompile(`ReportMetric\([^\n]*,\s*"([^"]+)"\)`)

// TestEveryReportedUnitIsDescribed reads the package's sources, so a new
// metric cannot ship without saying which way is better.
func TestEveryReportedUnitIsDescribed(t *testing.T) {
	known := map[string]bool{"ns/op": true, "MB/s": true, "B/op": true, "allocs/op": true}
	for _, u := range metricUnits {
		if known[u.unit] {
			t.Errorf("unit %s listed twice", u.unit)
		}
		known[u.unit] = true
		if u.better != "" && u.better != "higher" && u.better != "lower" {
			t.Errorf("unit %s: better=%q", u.unit, u.better)
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	found := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reportedUnit.FindAllSubmatch(src, -1) {
			found++
			if !known[string(m[1])] {
				t.Errorf("%s reports %q, which metricUnits does not describe", f, m[1])
			}
		}
	}
	if found == 0 {
		t.Fatal("found no ReportMetric calls; the pattern is stale")
	}
	// Latency percentiles are named by measure.MetricName, not literals.
	for _, p := range measure.ReportPercentilesAll {
		if u := measure.MetricName(p); !known[u] {
			t.Errorf("latency unit %s is not described", u)
		}
	}
}

// TestUnitLinesParse reads the Unit lines back the way benchstat does.
func TestUnitLinesParse(t *testing.T) {
	var b strings.Builder
	printUnits(&b)
	writeUnits(&b, []metricUnit{{unit: "disk-B", better: "lower", exact: true}})
	b.WriteString("BenchmarkX-2 1 100 ns/op 5 ops/s 1.5 space-amp 63 hit% 9 disk-B\n")
	r := benchfmt.NewReader(strings.NewReader(b.String()), "units")
	for r.Scan() {
		if err, ok := r.Result().(*benchfmt.SyntaxError); ok {
			t.Fatal(err)
		}
	}
	u := r.Units()
	if got := u.GetBetter("ops/s"); got != 1 {
		t.Errorf("ops/s better = %d, want higher", got)
	}
	if got := u.GetBetter("p99-ns"); got != -1 {
		t.Errorf("p99-ns better = %d, want lower", got)
	}
	if u.GetAssumption("disk-B") != benchmath.AssumeExact || u.GetAssumption("space-amp") != benchmath.AssumeNothing {
		t.Errorf("exact: true must print assume=exact, and only then")
	}
	if got := u.GetBetter("hit%"); got != 0 {
		t.Errorf("hit%% better = %d, want none", got)
	}
	if strings.Contains(b.String(), "hit%\n") {
		t.Errorf("hit%% has no direction and no Unit line:\n%s", b.String())
	}
}
