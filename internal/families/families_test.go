package families

import (
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	// Every package that registers workloads.
	_ "github.com/kvbench/kvbench/internal/workload"
	_ "github.com/kvbench/kvbench/internal/workload/embedded"
)

// TestEveryWorkloadHasAFamily: the registry says, for every registered
// workload and for nothing else, what make bench runs of it and what the
// gate judges it on; a new workload decides both here.
func TestEveryWorkloadHasAFamily(t *testing.T) {
	registered := map[string]bool{}
	for _, w := range core.Workloads() {
		registered[w.Name] = true
		if _, ok := byName[w.Name]; !ok {
			t.Errorf("workload %s has no family here: say which step of make bench runs it (or none) and which units the gate judges", w.Name)
		}
	}
	for n := range byName {
		if !registered[n] {
			t.Errorf("family %s names no registered workload", n)
		}
	}
}

// TestGatedUnitsAreReported: the gate can only judge a unit the workload
// reports (benchfmt's own, or one of its Units) and that says which way
// is better.
func TestGatedUnitsAreReported(t *testing.T) {
	standard := map[string]bool{"ns/op": true, "B/op": true, "allocs/op": true, "MB/s": true}
	for _, w := range core.Workloads() {
		for _, g := range Gate(w.Name) {
			if standard[g] {
				continue
			}
			found := false
			for _, u := range w.Units {
				if u.Name == g {
					found = true
					if u.Better == "" {
						t.Errorf("%s gates %s, which has no better direction", w.Name, g)
					}
				}
			}
			if !found {
				t.Errorf("%s gates %s, which it does not report", w.Name, g)
			}
		}
	}
}
