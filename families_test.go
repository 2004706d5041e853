package kvbench

import (
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/families"
)

// pinnedFamilies is, for every benchmark family, the step of make bench
// (and bench-full) that runs it and the units the gate judges it on, as
// its results' "gate" line names them. A change here changes what the
// gate passes or what make bench runs: make it on purpose.
var pinnedFamilies = map[string]struct{ step, gate string }{
	"Batch":          {"", "keys/s write-amp space-amp"},
	"Bloom":          {"", "achieved-ops/s p99-ns"},
	"Commit":         {"", "commits/s p99-ns"},
	"Delete":         {"", ""},
	"Disk":           {"read", ""},
	"EmbedBuild":     {"", "records/s"},
	"EmbedColdStart": {"", "ns/op open-read-ns majflt/op"},
	"EmbedGet":       {"", "ns/op read-B/op allocs/op"},
	"EmbedIterate":   {"", "ns/op read-B/op allocs/op"},
	"HTTP":           {"", "achieved-ops/s p99-ns"},
	"Iterate":        {"read", "ns/op read-B/op allocs/op"},
	"Knee":           {"", "knee-ops/s"},
	"Load":           {"", "achieved-ops/s p99-ns"},
	"Open":           {"read", "ns/op read-B/op allocs/op"},
	"Overwrite":      {"", "keys/s write-amp space-amp"},
	"Populate":       {"write", "keys/s write-amp space-amp"},
	"Prefetch":       {"", "ns/op read-B/op"},
	"ReadRandom":     {"read", "ns/op cpu-ns/op p50-ns B/op allocs/op read-B/op"},
	"Scan":           {"read", "ns/op p50-ns B/op allocs/op read-B/op"},
	"YCSB":           {"", "ns/op cpu-ns/op write-amp"},
}

// TestFamiliesGateAndStepsArePinned: every registered family gates the
// units pinned above and runs in the step pinned above, and the -bench
// patterns of make bench's steps select exactly the benchmarks of those
// families (a benchmark's name also selects it: "populate", "open").
func TestFamiliesGateAndStepsArePinned(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range core.Workloads() {
		seen[w.Name] = true
		want, ok := pinnedFamilies[w.Name]
		if !ok {
			t.Errorf("%s: a family this test does not pin: add its step and gated units", w.Name)
			continue
		}
		if got := strings.Join(gatedUnits(w), " "); got != want.gate {
			t.Errorf("%s gates %q, pinned %q", w.Name, got, want.gate)
		}
		if got := stepOf(w); got != want.step {
			t.Errorf("%s runs in step %q, pinned %q", w.Name, got, want.step)
		}
	}
	for name := range pinnedFamilies {
		if !seen[name] {
			t.Errorf("%s is pinned but not registered", name)
		}
	}
	for _, step := range []string{"write", "read", "populate", "readrandom", "open"} {
		var want []string
		for _, tg := range core.Targets() {
			if pinnedFamilies[tg.W.Name].step == step || strings.EqualFold(tg.W.Name, step) {
				want = append(want, tg.Name())
			}
		}
		if len(want) == 0 {
			t.Fatalf("step %s selects no benchmark", step)
		}
		if got := stepTargets(step); !slices.Equal(got, want) {
			t.Errorf("step %s lists %v, want %v", step, got, want)
		}
		if got, want := stepPattern(step), "^("+strings.Join(want, "|")+")$"; got != want {
			t.Errorf("step %s: pattern %s, want %s", step, got, want)
		}
	}
}

// The registry the pins are read from: the tooling's (internal/families).
func gatedUnits(w *core.Workload) []string { return families.Gate(w.Name) }
func stepOf(w *core.Workload) string       { return families.Of(w.Name).Step }
func stepPattern(step string) string       { return families.Pattern(step) }
func stepTargets(step string) []string {
	var names []string
	for _, t := range families.StepTargets(step) {
		names = append(names, t.Name())
	}
	return names
}
