package core

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Unit says which way one metric a workload reports is better, for the
// Unit lines benchstat and the gate read (benchfmt knows ns/op, MB/s, B/op
// and allocs/op). None is exact ("assume=exact"): write-amp, allocs/op and
// hit% all move between identical runs.
type Unit struct {
	Name   string
	Better string // "higher", "lower", or "" when it has no good direction
}

// Higher and Lower declare units; Info declares one that is neither.
func Higher(name string) Unit { return Unit{name, "higher"} }
func Lower(name string) Unit  { return Unit{name, "lower"} }
func Info(name string) Unit   { return Unit{Name: name} }

// LatencyUnits are what measure.Recorder.Report and ReportAll report.
var LatencyUnits = []Unit{Lower("p50-ns"), Lower("p90-ns"), Lower("p99-ns"), Lower("p999-ns"), Lower("p9999-ns"), Lower("max-ns")}

// AllUnits is every unit any registered workload reports, once; two that
// report one must agree on which way is better.
func AllUnits() []Unit {
	seen := map[string]Unit{}
	for _, w := range Workloads() {
		for _, u := range w.Units {
			if prev, ok := seen[u.Name]; ok && prev != u {
				panic(fmt.Sprintf("core: unit %s declared both %q and %q", u.Name, prev.Better, u.Better))
			}
			seen[u.Name] = u
		}
	}
	return slices.SortedFunc(maps.Values(seen), func(a, b Unit) int { return cmp.Compare(a.Name, b.Name) })
}

// writeUnits writes a Unit line per unit with a direction.
func writeUnits(w io.Writer, units []Unit) {
	for _, u := range units {
		if u.Better != "" {
			fmt.Fprintf(w, "Unit %s better=%s\n", u.Name, u.Better)
		}
	}
}
