package workload

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/load"
	"github.com/kvbench/kvbench/internal/measure"
)

// kneeResult is a synthetic trial at rate: done of scheduled operations
// completed over the window the schedule spans, recorded latencies all
// equal to p99, and unrun of them left unrun.
func kneeResult(rate int, scheduled, done, recorded, unrun int64, p99 time.Duration) *load.Result {
	lat := measure.NewRecorder()
	for i := int64(0); i < recorded; i++ {
		lat.Record(p99)
	}
	return &load.Result{Target: float64(rate), Scheduled: scheduled, Done: done, Unrun: unrun, Elapsed: time.Duration(float64(scheduled) / float64(rate) * float64(time.Second)), Latency: lat}
}

// TestFindKnee runs the search against a synthetic engine that serves up
// to capacity operations per second: the knee lands just under capacity,
// and every rate it passes was tried twice.
func TestFindKnee(t *testing.T) {
	c := defaultLoad()
	c.KneeStart, c.KneeSteps, c.SLO = 1000, 6, 10*time.Millisecond
	const capacity = 45_000
	tried := map[int]int{}
	trial := func(rate int, _ time.Duration) (*load.Result, error) {
		tried[rate]++
		p99 := time.Millisecond
		if rate > capacity {
			p99 = time.Second
		}
		return kneeResult(rate, 100, 100, 100, 0, p99), nil
	}
	knee, res, err := c.findKnee(kneeCycle{}, trial, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if knee > capacity || knee < capacity*95/100 || res == nil || res.Target != float64(knee) {
		t.Fatalf("knee %d (tried %v), want just under %d", knee, tried, capacity)
	}
	for rate, n := range tried {
		if want := map[bool]int{true: 2, false: 1}[rate <= capacity]; n != want {
			t.Errorf("rate %d tried %d times, want %d", rate, n, want)
		}
	}
}

// TestKneeNeedsEveryTrial: an engine whose trials alternate between
// holding 60k/s and only 30k/s (compaction in one window, not the next)
// has a knee under 30k: taking the better of two trials put it near 60k.
// A stall at a rate it can serve lowers the knee, never raises it.
func TestKneeNeedsEveryTrial(t *testing.T) {
	c := defaultLoad()
	c.KneeStart, c.KneeSteps, c.SLO = 1000, 8, 10*time.Millisecond
	const lucky, unlucky = 60_000, 30_000
	n := 0
	trial := func(rate int, _ time.Duration) (*load.Result, error) {
		n++
		capacity := unlucky
		if n%2 == 1 {
			capacity = lucky
		}
		p99 := time.Millisecond
		if rate > capacity {
			p99 = 50 * time.Millisecond
		}
		return kneeResult(rate, 100, 100, 100, 0, p99), nil
	}
	knee, _, err := c.findKnee(kneeCycle{}, trial, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if knee > unlucky || knee < unlucky*95/100 {
		t.Errorf("knee %d, want just under %d, the rate held in every trial", knee, unlucky)
	}

	n = 0
	stalled := 0
	knee, _, err = c.findKnee(kneeCycle{}, func(rate int, _ time.Duration) (*load.Result, error) {
		n++
		p99 := time.Millisecond
		if n == 6 { // the machine pauses in the second trial at 4,000/s
			stalled, p99 = rate, time.Second
		}
		if rate > unlucky {
			p99 = time.Second
		}
		return kneeResult(rate, 100, 100, 100, 0, p99), nil
	}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if stalled == 0 || knee >= stalled {
		t.Errorf("knee %d with a stall at %d ops/s: a stall must fail its rate", knee, stalled)
	}
}

// TestKneeFailsMissingOperations: a trial in which some operations due in
// the window are missing from the histogram, or were left unrun, fails
// however good the p99 of the rest, even when the rest achieved 99.5% of
// the target (which the rule "achieved >= 99% and p99 <= SLO" passed).
func TestKneeFailsMissingOperations(t *testing.T) {
	c := defaultLoad()
	c.SLO = 10 * time.Millisecond
	for _, tc := range []struct {
		name                           string
		scheduled, done, recorded, unr int64
		p99                            time.Duration
		want                           bool
	}{
		{"complete", 1000, 1000, 1000, 0, time.Millisecond, true},
		{"complete over the slo", 1000, 1000, 1000, 0, 11 * time.Millisecond, false},
		{"0.5% never recorded", 1000, 995, 995, 0, time.Millisecond, false},
		{"0.5% unrun at the hard stop", 1000, 995, 1000, 5, time.Millisecond, false},
	} {
		res := kneeResult(1000, tc.scheduled, tc.done, tc.recorded, tc.unr, tc.p99)
		if got := c.sustained(res); got != tc.want {
			t.Errorf("%s: sustained %v, want %v (achieved %.0f of %.0f)", tc.name, got, tc.want, res.Achieved(), res.Target)
		}
	}

	// Past capacity the synthetic engine silently drops 0.5% of its
	// operations: the knee stops at capacity.
	c.KneeStart, c.KneeSteps = 1000, 6
	const capacity = 20_000
	knee, _, err := c.findKnee(kneeCycle{}, func(rate int, _ time.Duration) (*load.Result, error) {
		done := int64(1000)
		if rate > capacity {
			done = 995
		}
		return kneeResult(rate, 1000, done, done, 0, time.Millisecond), nil
	}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if knee > capacity || knee < capacity*95/100 {
		t.Errorf("knee %d, want just under %d", knee, capacity)
	}
}

// lsm1k is upserts of 1 KiB values on an LSM with a 64 MiB memtable: 1,040
// bytes an upsert (a 16-byte key and the value).
var lsm1k = kneeCycle{memtable: 64 << 20, perOp: 16 + 1024}

// TestKneeCycleOf: upserts on the LSMs have the memtable of the options
// given; upserts on the B-trees and the rail, and gets anywhere, have none.
func TestKneeCycleOf(t *testing.T) {
	o := engine.Options{MemtableMB: 64}
	for _, name := range []string{"badger", "goleveldb", "pebble", "rocksdb"} {
		info := coretest.Engine(t, name)
		if cy := kneeCycleOf(info, o, "upsert", 1024); cy != lsm1k {
			t.Errorf("%s upsert: %+v, want %+v", name, cy, lsm1k)
		}
		if cy := kneeCycleOf(info, o, "get", 1024); cy != (kneeCycle{}) {
			t.Errorf("%s get: %+v, want none", name, cy)
		}
	}
	for _, name := range []string{"bolt", "lmdb", "memory"} {
		if cy := kneeCycleOf(coretest.Engine(t, name), o, "upsert", 1024); cy != (kneeCycle{}) {
			t.Errorf("%s upsert: %+v, want none", name, cy)
		}
	}
}

// namedDB is an engine.DB that only says which engine it is.
type namedDB struct {
	engine.DB
	name string
}

func (d namedDB) Name() string { return d.name }

// TestKneeCycleHasTheBudgetMemtable: under -mem_limit the cycle is the
// rule's memtable (1 MiB at 40 MiB), the one the fixture is opened with,
// not -memtable_mb's 64 MiB; the value is -valsz.
func TestKneeCycleHasTheBudgetMemtable(t *testing.T) {
	c := core.Default()
	c.KeysMil, c.ValSize, c.MemLimit = 0.005, 512, 40<<20
	e, err := core.NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := kneeCycle{memtable: 1 << 20, perOp: 16 + 512}
	if cy := kneeCycleOn(e, namedDB{name: "pebble"}, "upsert"); cy != want {
		t.Errorf("pebble under a 40 MiB budget: %+v, want %+v", cy, want)
	}
	if cy := kneeCycleOn(e, namedDB{name: "lmdb"}, "upsert"); cy != (kneeCycle{}) {
		t.Errorf("lmdb: %+v, want none", cy)
	}
}

// TestKneeTrialTime: with 2 fills and the default bounds (2s to 20s), an
// upsert trial on an LSM at 1 KiB values and 64 MiB memtables lasts
// 2 × 64 MiB ÷ (R × 1,040 B), rounded up to 100ms, between the bounds;
// without a cycle, or with -knee_flushes 0, it lasts -knee_time. The
// default is 5 fills.
func TestKneeTrialTime(t *testing.T) {
	c := defaultLoad()
	if c.KneeFlushes != 5 {
		t.Fatalf("-knee_flushes defaults to %d, want 5 (a level-0 compaction cycle of every LSM)", c.KneeFlushes)
	}
	c.KneeFlushes = 2
	for _, tc := range []struct {
		rate  int
		cy    kneeCycle
		want  time.Duration
		fills float64
	}{
		{16_000, kneeCycle{}, 2 * time.Second, 0},
		{16_000, lsm1k, 8100 * time.Millisecond, 2.008},                      // 8.066s
		{8_000, lsm1k, 16200 * time.Millisecond, 2.008},                      // 16.13s
		{100_000, lsm1k, 2 * time.Second, 3.099},                             // 1.29s: -knee_time binds
		{6_453, lsm1k, 20 * time.Second, 2.000},                              // 19.9993s, rounded up to the cap
		{6_452, lsm1k, 20 * time.Second, 1.9998},                             // 20.0024s: the cap binds
		{4_000, lsm1k, 20 * time.Second, 1.240},                              // 32.3s: the cap binds
		{1, kneeCycle{memtable: 4096 << 20, perOp: 17}, 20 * time.Second, 0}, // no overflow
	} {
		d := c.trialTime(tc.rate, tc.cy)
		if d != tc.want {
			t.Errorf("%d ops/s, %+v: %v, want %v", tc.rate, tc.cy, d, tc.want)
		}
		if tc.fills > 0 {
			if f := tc.cy.fills(tc.rate, d); math.Abs(f-tc.fills) > 0.001 {
				t.Errorf("%d ops/s for %v: %.4f memtables, want %.4f", tc.rate, d, f, tc.fills)
			}
		}
	}
	// The cap binds below 2 × 64 MiB ÷ (20s × 1,040 B) = 6,452.8 upserts/s.
	if f := lsm1k.fills(6_453, c.trialTime(6_453, lsm1k)); f < 2 {
		t.Errorf("6,453/s spans %.4f memtables, want at least 2", f)
	}
	if f := lsm1k.fills(6_452, c.trialTime(6_452, lsm1k)); f >= 2 {
		t.Errorf("6,452/s spans %.4f memtables, want fewer than 2 (the cap)", f)
	}
	off := c
	off.KneeFlushes = 0
	if d := off.trialTime(4_000, lsm1k); d != 2*time.Second {
		t.Errorf("-knee_flushes 0: %v, want -knee_time", d)
	}
	cfg := core.Default()
	kneeFlushesFlag.Set(&cfg, 0)
	if r := kneeRule(&cfg); !strings.Contains(r, " steps, 2s per trial, sustained") {
		t.Errorf("-knee_flushes 0 echoes %q", r)
	}
	three := c
	three.KneeFlushes, three.KneeMaxTime = 3, time.Minute
	if d := three.trialTime(4_000, lsm1k); d != 48400*time.Millisecond { // 48.39s
		t.Errorf("-knee_flushes 3 -knee_max_time 1m at 4,000/s: %v, want 48.4s", d)
	}
}

// TestFindKneeTrialsSpanTheirMemtables: the search runs each rate's trials
// for trialTime and logs each one's length and the memtables it fills.
func TestFindKneeTrialsSpanTheirMemtables(t *testing.T) {
	c := defaultLoad()
	c.KneeStart, c.KneeSteps, c.KneeFlushes = 4000, 0, 2
	got := map[int][]time.Duration{}
	var lines []string
	knee, _, err := c.findKnee(lsm1k, func(rate int, d time.Duration) (*load.Result, error) {
		got[rate] = append(got[rate], d)
		p99 := time.Millisecond
		if rate > 10_000 {
			p99 = time.Second
		}
		return kneeResult(rate, 100, 100, 100, 0, p99), nil
	}, func(f string, args ...any) { lines = append(lines, fmt.Sprintf(f, args...)) })
	if err != nil {
		t.Fatal(err)
	}
	if knee != 8000 {
		t.Errorf("knee %d, want 8000", knee)
	}
	want := map[int][]time.Duration{4000: {20 * time.Second, 20 * time.Second}, 8000: {16200 * time.Millisecond, 16200 * time.Millisecond}, 16000: {8100 * time.Millisecond}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("trials %v, want %v", got, want)
	}
	log := strings.Join(lines, "\n")
	for _, w := range []string{"knee: 4000 ops/s for 20s = 1.2 memtables: ", "knee: 8000 ops/s for 16.2s = 2.0 memtables: ", "knee: 16000 ops/s for 8.1s = 2.0 memtables: "} {
		if !strings.Contains(log, w) {
			t.Errorf("no %q in\n%s", w, log)
		}
	}
	lines = nil
	if _, _, err := c.findKnee(kneeCycle{}, func(rate int, d time.Duration) (*load.Result, error) {
		return kneeResult(rate, 100, 100, 100, 0, time.Second), nil
	}, func(f string, args ...any) { lines = append(lines, fmt.Sprintf(f, args...)) }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "knee: 4000 ops/s for 2s: ") {
		t.Errorf("without a cycle: %q, want one trial of 2s", lines)
	}
}

// TestKneeSpread: the median, not the mean, of the searches' knees; the
// spread is (max-min)/median, undefined when the median is 0.
func TestKneeSpread(t *testing.T) {
	for _, tc := range []struct {
		knees            []float64
		median, min, max float64
		pct              float64
		ok               bool
	}{
		{[]float64{32_000}, 32_000, 32_000, 32_000, 0, true},
		{[]float64{36_000, 30_000, 32_000}, 32_000, 30_000, 36_000, 18.75, true},
		{[]float64{40_000, 30_000}, 35_000, 30_000, 40_000, 100.0 * 10 / 35, true},
		{[]float64{8_000, 1_000, 8_500, 8_200}, 8_100, 1_000, 8_500, 100.0 * 7_500 / 8_100, true},
		{[]float64{0, 1_000, 0}, 0, 0, 1_000, 0, false},
	} {
		in := append([]float64(nil), tc.knees...)
		s := spreadOf(tc.knees)
		if s.median != tc.median || s.min != tc.min || s.max != tc.max {
			t.Errorf("%v: %+v, want median %v min %v max %v", tc.knees, s, tc.median, tc.min, tc.max)
		}
		if pct, ok := s.pct(); ok != tc.ok || math.Abs(pct-tc.pct) > 1e-9 {
			t.Errorf("%v: spread %v%% (%v), want %v%% (%v)", tc.knees, pct, ok, tc.pct, tc.ok)
		}
		if fmt.Sprint(in) != fmt.Sprint(tc.knees) {
			t.Errorf("spreadOf reordered its input: %v, was %v", tc.knees, in)
		}
	}
	if m := median(nil); m != 0 {
		t.Errorf("median of none: %v", m)
	}
}

// TestKneeReportsSpread runs the knee of gets on the rail: one search
// reports its knee alone; three report the median as knee-ops/s, the
// lowest and highest, and their spread.
func TestKneeReportsSpread(t *testing.T) {
	cfg := core.Default()
	cfg.KeysMil, cfg.ValSize = 0.001, 100
	// What is checked is how the searches' knees are reported, not where
	// they fall. A first rate that puts one operation in a window, which a
	// window always runs, and an SLO no stall breaks: every search
	// sustains its first rate, however loaded the machine.
	withLoad(&cfg, func(l *loadSettings) {
		l.KneeTime, l.KneeStart, l.KneeSteps, l.SLO = 5*time.Millisecond, 100, 0, time.Minute
	})
	e := setup(t, cfg, "BenchmarkKneeMemory", io.Discard)
	db := loadedRail(t, e)
	run := func() testing.BenchmarkResult {
		return testing.Benchmark(func(b *testing.B) { runKnee(b, e, "get", func(*testing.B) engine.DB { return db }) })
	}

	coretest.SetBenchtime(t, "1x")
	r := run()
	if _, ok := r.Extra["knee-ops/s"]; r.N != 1 || !ok {
		t.Fatalf("N=%d, metrics %v", r.N, r.Extra)
	}
	for _, u := range []string{"knee-min-ops/s", "knee-max-ops/s", "knee-spread%"} {
		if _, ok := r.Extra[u]; ok {
			t.Errorf("%s reported for one search: %v", u, r.Extra)
		}
	}

	coretest.SetBenchtime(t, "3x")
	r = run()
	knee, lo, hi := r.Extra["knee-ops/s"], r.Extra["knee-min-ops/s"], r.Extra["knee-max-ops/s"]
	if r.N != 3 || !(lo <= knee && knee <= hi) || lo < 100 {
		t.Fatalf("N=%d: knee %v, min %v, max %v: %v", r.N, knee, lo, hi, r.Extra)
	}
	pct, ok := r.Extra["knee-spread%"]
	if want := (hi - lo) / knee * 100; knee > 0 && (!ok || math.Abs(pct-want) > 1e-9) {
		t.Errorf("knee-spread%% %v (reported %v), want %v", pct, ok, want)
	}
}
