// Package families is the tooling's own registry of the benchmark
// families (the workloads core.Register declares): which step of make
// bench runs each one, and which of the units it reports the regression
// gate judges it on. A workload declares what it measures
// (core.Workload.Units); what make bench runs and what a comparison is
// decided on belong to the tooling, and are kept here. The test binary
// prints a family's gated units as the "gate" line before its results
// (core.Main), so results files say what the gate judges.
package families

import (
	"strings"

	"github.com/kvbench/kvbench/internal/core"
)

// Family is what the tooling knows of one workload.
type Family struct {
	// Step is the step of make bench (and bench-full) that runs it
	// ("write", "read"), "" for none.
	Step string
	// Gate lists the units that carry its result, the ones the regression
	// gate (benchstat/internal/gate) compares. Units that restate another (ops/s
	// beside ns/op) or describe the run (hit%) stay out; nil prints no
	// gate line, and the gate falls back to its default units.
	Gate []string
}

// populateGate is what a populate is judged on: its rate over the whole
// interval and what it costs the device and the disk.
var populateGate = []string{"keys/s", "write-amp", "space-amp"}

// fixedRateGate is what a fixed-rate run is judged on: the rate it
// achieved (its ns/op is 1e9 / that rate, so it says nothing while the
// rate is met) and its p99, which the gate compares only at rates the
// base sustained.
var fixedRateGate = []string{"achieved-ops/s", "p99-ns"}

// embedReadGate is what a read of the embedded cdb is judged on.
var embedReadGate = []string{"ns/op", "read-B/op", "allocs/op"}

// byName holds every registered workload's family, by workload name;
// TestEveryWorkloadHasAFamily holds it to the workloads.
var byName = map[string]Family{
	"Populate":   {Step: "write", Gate: populateGate},
	"ReadRandom": {Step: "read", Gate: []string{"ns/op", "cpu-ns/op", "p50-ns", "B/op", "allocs/op", "read-B/op"}},
	"Iterate":    {Step: "read", Gate: []string{"ns/op", "read-B/op", "allocs/op"}},
	"Scan":       {Step: "read", Gate: []string{"ns/op", "p50-ns", "B/op", "allocs/op", "read-B/op"}},
	"Open":       {Step: "read", Gate: []string{"ns/op", "read-B/op", "allocs/op"}},
	"Disk":       {Step: "read"},

	"Batch":     {Gate: populateGate},
	"Commit":    {Gate: []string{"commits/s", "p99-ns"}},
	"Overwrite": {Gate: populateGate},
	"YCSB":      {Gate: []string{"ns/op", "cpu-ns/op", "write-amp"}},
	"Delete":    {},
	"Prefetch":  {Gate: []string{"ns/op", "read-B/op"}},
	"Load":      {Gate: fixedRateGate},
	"HTTP":      {Gate: fixedRateGate},
	"Bloom":     {Gate: fixedRateGate},
	"Knee":      {Gate: []string{"knee-ops/s"}},

	"EmbedGet":       {Gate: embedReadGate},
	"EmbedIterate":   {Gate: embedReadGate},
	"EmbedBuild":     {Gate: []string{"records/s"}},
	"EmbedColdStart": {Gate: []string{"ns/op", "open-read-ns", "majflt/op"}},
}

// Of is the family of the workload named name; a workload it does not
// know has none (no step, no gate line).
func Of(name string) Family { return byName[name] }

// Gate is the units the gate judges the workload named name on: what
// core.Main prints as its results' "gate" line.
func Gate(name string) []string { return byName[name].Gate }

// Pattern is a -bench pattern that selects exactly the top-level
// benchmarks of the workloads in step.
func Pattern(step string) string {
	var names []string
	for _, t := range StepTargets(step) {
		names = append(names, t.Name())
	}
	return "^(" + strings.Join(names, "|") + ")$"
}

// StepTargets lists the top-level benchmarks of the workloads in step, in
// name order; a workload's name also names a step of its own
// ("populate", "readrandom": make bench's memory-limited row runs each in
// a process of its own, so an engine the budget kills takes no other
// result with it).
func StepTargets(step string) []core.Target {
	var out []core.Target
	for _, t := range core.Targets() {
		if Of(t.W.Name).Step == step || strings.EqualFold(t.W.Name, step) {
			out = append(out, t)
		}
	}
	return out
}
