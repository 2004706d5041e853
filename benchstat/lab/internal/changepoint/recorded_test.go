//go:build !race

// Thousands of shuffles per series: make unit runs these without -race
// (the package has no goroutines for it to watch).

package changepoint

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The recorded history (testdata/make-bench.tsv.gz): aaRuns runs of make
// bench at one commit, then the runs of a commit whose bbolt point read
// spins about 100 ns. The figures below are docs/history.md's.
const (
	aaRuns = 30
	// aaFlaggedMax: series of the A/A runs with a change point, at most.
	aaFlaggedMax = 13
)

// slowSeries is the point read the slowdown commit changed.
var slowSeries = seriesKey{"BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=63%/threads=1-2", "ns/op"}

// corrected returns every time series' run medians over runs [0, hi)
// with the run drift taken out as the report does, other units as they
// are.
func (r *recorded) corrected(hi int) map[seriesKey][]float64 {
	var samples []Sample
	for _, k := range r.keys() {
		if k.unit == "ns/op" {
			if xs := r.medians(k, 0, hi); xs != nil {
				samples = append(samples, Sample{engineOf(k.name), xs})
			}
		}
	}
	f := Drift(samples, hi)
	out := map[seriesKey][]float64{}
	for _, k := range r.keys() {
		if xs := r.medians(k, 0, hi); xs != nil {
			if fe, ok := f[engineOf(k.name)]; ok {
				xs = Correct(k.unit, xs, fe)
			}
			out[k] = xs
		}
	}
	return out
}

var engineName = regexp.MustCompile(`^Benchmark[A-Za-z]+?(Badger|Bolt|Lmdb|Pebble|RocksDB|Memory)/`)

func engineOf(name string) string {
	if m := engineName.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

func seedOf(k seriesKey) uint64 {
	h := fnv.New64a()
	h.Write([]byte(k.name + " " + k.unit))
	return h.Sum64()
}

func TestRecordedAAFlagsAtDocumentedRate(t *testing.T) {
	r := readRecorded(t)
	series := 0
	var flagged []string
	c := r.corrected(aaRuns)
	for _, k := range r.keys() {
		xs := c[k]
		if xs == nil {
			continue
		}
		series++
		if c := Detect(xs, Default, seedOf(k)); len(c) > 0 {
			flagged = append(flagged, k.name+" "+k.unit)
		}
	}
	if series < 100 {
		t.Fatalf("only %d series of %d runs in %s", series, aaRuns, recordedFile)
	}
	t.Logf("%d of %d A/A series flagged", len(flagged), series)
	if len(flagged) > aaFlaggedMax {
		t.Errorf("%d of %d series of %d runs of one commit have a change point, documented: at most %d:\n%s",
			len(flagged), series, aaRuns, aaFlaggedMax, strings.Join(flagged, "\n"))
	}
}

func TestRecordedSlowdownFound(t *testing.T) {
	r := readRecorded(t)
	if r.runs <= aaRuns+Default.MinSize {
		t.Fatalf("%s has %d runs: no slowdown runs after the %d A/A runs", recordedFile, r.runs, aaRuns)
	}
	xs := r.corrected(r.runs)[slowSeries]
	if xs == nil {
		t.Fatalf("%s: no %v in every run", recordedFile, slowSeries)
	}
	// Runs of one commit measure the same code: a change may start only
	// where the commit changes, as the report asks.
	splits := make([]bool, len(xs))
	splits[aaRuns] = true
	got := DetectAt(xs, splits, Default, seedOf(slowSeries))
	if free := Detect(xs, Default, seedOf(slowSeries)); len(free) != 1 || free[0].Index < aaRuns || free[0].Index > aaRuns+1 {
		t.Errorf("with a change allowed anywhere: %+v, want one within a run of %d", free, aaRuns)
	}
	if len(got) != 1 || got[0].Index != aaRuns || got[0].After <= got[0].Before {
		t.Fatalf("%s %s: want one slowdown at run %d, got %+v", slowSeries.name, slowSeries.unit, aaRuns, got)
	}
	t.Logf("%s: %.0f -> %.0f ns/op (%+.1f%%), p %.4f", slowSeries.name, got[0].Before, got[0].After, 100*(got[0].After/got[0].Before-1), got[0].P)
}

// TestStepInRecordedNoise puts a step into every recorded A/A time
// series at run 20 (the last 10 runs made slower by the step, drift taken
// out as the report does) and counts the series where the change is found
// at run 20: the suite's own time-mode noise, with its drifts and
// outliers, not a model of it. The counts are docs/history.md's.
func TestStepInRecordedNoise(t *testing.T) {
	r := readRecorded(t)
	c := r.corrected(aaRuns)
	const at = 20
	for _, tc := range []struct {
		step    float64
		atLeast int // series found at run 20, of 252
	}{{1.05, 22}, {1.10, 101}, {1.20, 171}} {
		exact, n := 0, 0
		var spreads []float64
		for _, k := range r.keys() {
			xs := slices.Clone(c[k])
			if xs == nil || !Drifts(k.unit) {
				continue
			}
			n++
			spreads = append(spreads, robustSpread(xs))
			for i := at; i < len(xs); i++ {
				if isRate(k.unit) {
					xs[i] /= tc.step
				} else {
					xs[i] *= tc.step
				}
			}
			if slices.ContainsFunc(Detect(xs, Default, seedOf(k)), func(c Change) bool { return c.Index == at }) {
				exact++
			}
		}
		slices.Sort(spreads)
		t.Logf("%d series, drift out: spread median %.1f%%, 90th percentile %.1f%%; a %+.0f%% step at run %d found there in %d",
			n, 100*spreads[len(spreads)/2], 100*spreads[len(spreads)*9/10], 100*(tc.step-1), at, exact)
		if exact < tc.atLeast {
			t.Errorf("%+.0f%% step: found at its run in %d of %d series, documented %d", 100*(tc.step-1), exact, n, tc.atLeast)
		}
	}
}

// TestStepAtSimNoise: a 5 % step in a series as noisy as the noisiest of
// the suite's instruction counts is found at its run. That noise is
// ScanBadger's: its per-round change between two runs of one binary
// spreads 1.5 % (docs/gate-power/sim/spread.md), so one round spreads
// 1.5/√2 = 1.06 %; a recorded point, the median of 9 rounds, spreads
// less.
func TestStepAtSimNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	const trials, after, sd = 100, 10, 0.0106
	exact := 0
	for trial := range trials {
		xs := append(noisy(rng, 20, 1000, sd), noisy(rng, after, 1050, sd)...)
		if c := Detect(xs, Default, uint64(trial)); len(c) == 1 && c[0].Index == 20 {
			exact++
		}
	}
	t.Logf("5%% step in %.2f%% noise, %d runs after: found at its run in %d of %d", 100*sd, after, exact, trials)
	if exact < 95 {
		t.Errorf("5%% step in %.2f%% noise, %d runs after: found at its run in %d of %d, want 95 or more", 100*sd, after, exact, trials)
	}
}

// robustSpread is a series' relative spread: 1.4826 times the median
// absolute deviation, over the median (the standard deviation's estimate
// for normal noise that one outlier does not move).
func robustSpread(xs []float64) float64 {
	m := median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return 1.4826 * median(dev) / m
}

// TestMethodsOnRecordedNoise is the comparison docs/history.md makes:
// on the same A/A runs, how many series each candidate method flags.
func TestMethodsOnRecordedNoise(t *testing.T) {
	r := readRecorded(t)
	c := r.corrected(aaRuns)
	var series, ed, overlap, z5 int
	for _, k := range r.keys() {
		xs := c[k]
		if xs == nil {
			continue
		}
		series++
		if len(Detect(xs, Default, seedOf(k))) > 0 {
			ed++
		}
		if len(overlapFlags(r.series[k][:aaRuns])) > 0 {
			overlap++
		}
		if len(zscoreFlags(xs, 5, 5)) > 0 {
			z5++
		}
	}
	t.Logf("A/A series flagged of %d: E-divisive %d, interval overlap %d (raw ranges), z-score 5 %d", series, ed, overlap, z5)
	if ed > overlap || ed > z5 {
		t.Errorf("E-divisive flags %d A/A series, more than interval overlap (%d) or the z-score (%d): docs/history.md's choice no longer holds", ed, overlap, z5)
	}
}
