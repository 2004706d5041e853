package kvbench

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/measure"
)

// reportedUnit matches the unit literal of a ReportMetric call.
var reportedUnit = regexp.MustCompile(`ReportMetric\([^\n]*,\s*"([^"]+)"\)`)

// TestEveryReportedUnitIsDeclared reads the sources of the core and of
// every workload package, so a new metric cannot ship without its
// workload saying which way is better.
func TestEveryReportedUnitIsDeclared(t *testing.T) {
	known := map[string]bool{"ns/op": true, "MB/s": true, "B/op": true, "allocs/op": true}
	for _, u := range core.AllUnits() {
		if known[u.Name] {
			t.Errorf("unit %s is benchfmt's own", u.Name)
		}
		known[u.Name] = true
		if u.Better != "" && u.Better != "higher" && u.Better != "lower" {
			t.Errorf("unit %s: better=%q", u.Name, u.Better)
		}
	}
	var files []string
	for _, dir := range []string{"internal/core", "internal/workload", "internal/workload/*"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reportedUnit.FindAllSubmatch(src, -1) {
			found++
			if !known[string(m[1])] {
				t.Errorf("%s reports %q, which no workload declares in its Units", f, m[1])
			}
		}
	}
	if found == 0 {
		t.Fatal("found no ReportMetric calls; the pattern is stale")
	}
	// Latency percentiles are named by measure.MetricName, not literals.
	for _, p := range measure.ReportPercentilesAll {
		if u := measure.MetricName(p); !known[u] {
			t.Errorf("latency unit %s is not declared", u)
		}
	}
}
