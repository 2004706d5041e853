// Package families is the tooling's registry of the benchmark families
// (the workloads core.Register declares): the step of make bench that
// runs each, and the units the regression gate judges it on, which the
// test binary prints as the "gate" line before its results (core.Main).
package families

import (
	"strings"

	"github.com/kvbench/kvbench/internal/core"
)

// Family is what the tooling knows of one workload.
type Family struct {
	// Step is the step of make bench that runs it ("write", "read"), or "".
	Step string
	// Gate lists the units the gate compares: none that restates another
	// (ops/s) or describes the run (hit%); nil: the gate's default units.
	Gate []string
}

// What a populate, a fixed-rate run (its ns/op is 1e9 / its rate: it says
// nothing while the rate is met) and a read of the embedded cdb are judged
// on.
var (
	populateGate  = []string{"keys/s", "write-amp", "space-amp"}
	fixedRateGate = []string{"achieved-ops/s", "p99-ns"}
	embedReadGate = []string{"ns/op", "read-B/op", "allocs/op"}
)

// byName holds every registered workload's family, by workload name.
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

// Of is the family of the workload named name (none for one it does not
// know).
func Of(name string) Family { return byName[name] }

// Gate is the units the gate judges the workload named name on.
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
// name order. A workload's name is a step of its own ("populate"): make
// bench's memory-limited row runs each in a process, so an engine the
// budget kills takes no other result with it.
func StepTargets(step string) []core.Target {
	var out []core.Target
	for _, t := range core.Targets() {
		if Of(t.W.Name).Step == step || strings.EqualFold(t.W.Name, step) {
			out = append(out, t)
		}
	}
	return out
}
