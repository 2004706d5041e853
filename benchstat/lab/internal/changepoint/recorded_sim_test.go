//go:build !race

package changepoint

import (
	"slices"
	"testing"
)

// The recorded instruction-count history (testdata/make-bench-sim.tsv.gz):
// simAARuns runs of make bench-sim at one commit, then the runs of the
// commit whose bbolt point read spins about 100 ns. The figures are
// docs/history.md's.
const (
	simAARuns = 30
	// simAAFlaggedMax: series of the A/A runs with a change point, at most.
	simAAFlaggedMax = 0
)

var slowSimSeries = seriesKey{"BenchmarkReadRandomBolt/valsz=256/cache=warm/hit=63%/threads=1", "instr/op"}

func TestRecordedSimAAFlagsAtDocumentedRate(t *testing.T) {
	r := readRecordedFile(t, recordedSimFile)
	series := 0
	var flagged []string
	for _, k := range r.keys() {
		xs := r.medians(k, 0, simAARuns)
		if xs == nil {
			continue
		}
		series++
		if len(Detect(xs, Default, seedOf(k))) > 0 {
			flagged = append(flagged, k.name+" "+k.unit)
		}
	}
	if series < 10 {
		t.Fatalf("only %d series of %d runs in %s", series, simAARuns, recordedSimFile)
	}
	t.Logf("%d of %d A/A series flagged: %v", len(flagged), series, flagged)
	if len(flagged) > simAAFlaggedMax {
		t.Errorf("%d of %d series of %d runs of one commit have a change point, documented: at most %d: %v",
			len(flagged), series, simAARuns, simAAFlaggedMax, flagged)
	}
}

func TestRecordedSimSlowdownFound(t *testing.T) {
	r := readRecordedFile(t, recordedSimFile)
	xs := r.medians(slowSimSeries, 0, r.runs)
	if xs == nil || len(xs) <= simAARuns+Default.MinSize {
		t.Fatalf("%s: no %v in every run, or no slowdown runs", recordedSimFile, slowSimSeries)
	}
	// Anywhere: instruction counts need no help from the commits.
	got := Detect(xs, Default, seedOf(slowSimSeries))
	if len(got) != 1 || got[0].Index != simAARuns || got[0].After <= got[0].Before {
		t.Fatalf("%s %s: want one slowdown at run %d, got %+v", slowSimSeries.name, slowSimSeries.unit, simAARuns, got)
	}
	t.Logf("%s: %.0f -> %.0f instr/op (%+.1f%%), p %.4f", slowSimSeries.name, got[0].Before, got[0].After, 100*(got[0].After/got[0].Before-1), got[0].P)
}

// TestStepInRecordedSimNoise is the 5 % step of TestStepInRecordedNoise
// in the recorded instruction counts: the suite's own noise in the mode
// meant for small changes.
func TestStepInRecordedSimNoise(t *testing.T) {
	r := readRecordedFile(t, recordedSimFile)
	const at = 20
	exact, n := 0, 0
	var spreads []float64
	for _, k := range r.keys() {
		xs := r.medians(k, 0, simAARuns)
		if xs == nil || median(xs) == 0 {
			continue // no allocations: 5 % more of nothing is nothing
		}
		n++
		spreads = append(spreads, robustSpread(xs))
		for i := at; i < len(xs); i++ {
			xs[i] *= 1.05
		}
		if c := Detect(xs, Default, seedOf(k)); len(c) == 1 && c[0].Index == at {
			exact++
		} else {
			t.Logf("missed: %s %s: %+v", k.name, k.unit, c)
		}
	}
	slices.Sort(spreads)
	t.Logf("%d series: spread median %.2f%%, largest %.2f%%; a 5%% step at run %d found there, alone, in %d",
		n, 100*spreads[len(spreads)/2], 100*spreads[len(spreads)-1], at, exact)
	if exact < n {
		t.Errorf("a 5%% step at run %d was found there in %d of %d series", at, exact, n)
	}
}
