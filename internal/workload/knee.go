package workload

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/load"
)

// Knee: the highest rate an engine sustains under the -slo p99, found by
// a search of fixed-rate trials (gets, or upserts on a copy of the
// fixture): docs/methodology.md, "Fixed-rate load and the knee", the rule
// the comments below implement.
func init() {
	core.Register(&core.Workload{
		Name:     "Knee",
		Engines:  core.Everything,
		Fixtures: kvFixture,
		Scratch:  kneeScratch,
		Units:    []core.Unit{core.Higher("knee-ops/s"), core.Lower("knee-p99-ns"), core.Higher("knee-min-ops/s"), core.Higher("knee-max-ops/s"), core.Lower("knee-spread%")},
		Options:  loadFlags,
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			slo := sloFlag.Get(&e.Cfg)
			// Gets leave the fixture as they found it: every search reads
			// the one warm handle.
			h.Run(b, fmt.Sprintf("op=get/slo=%v", slo), core.Warm, nil, func(b *testing.B, db engine.DB) {
				runKnee(b, e, "get", func(*testing.B) engine.DB { return db })
			})
			leafOnCopies(e, b, h, fmt.Sprintf("op=upsert/slo=%v", slo), false, func(b *testing.B, fresh func(*testing.B) engine.DB) {
				runKnee(b, e, "upsert", fresh)
			})
		},
	})
}

// kneeScratch is the copy of the fixture the upsert search writes to, and
// on an LSM what one trial leaves beside it before compactions catch up:
// its -knee_flushes memtables and two more in flight. The new keys of the
// whole search are not in it: they depend on the knee it finds.
func kneeScratch(e *core.Env, info engine.Info) int64 {
	if info.Reference {
		return 0
	}
	extra := int64(0)
	if info.DataBlocks {
		extra = int64(kneeFlushesFlag.Get(&e.Cfg)+2) * int64(e.Cfg.MemtableMB) << 20
	}
	return 3 * (e.Gen.LogicalBytes() + extra)
}

// kneeTrials is how many trials a rate must pass, every one of them, to
// count as sustained; the first failed trial fails it.
const kneeTrials = 2

// sustained is the knee's pass rule for one trial: every operation due in
// the window done, and the p99 of all of them within the SLO.
func (c loadSettings) sustained(res *load.Result) bool {
	return res.Complete() && time.Duration(res.Latency.Percentile(99)) <= c.SLO
}

// kneeCycle is the periodic work of upserts on an LSM: the memtable, in
// bytes, whose every fill ends in a flush, and the bytes one upsert adds
// to it. The zero kneeCycle is none (B-trees, gets).
type kneeCycle struct {
	memtable int64
	perOp    int64
}

// kneeCycleOf is the cycle of op on info's engine opened with o (a memory
// budget's memtable included). The engines with data blocks are the LSMs;
// an upsert counts its key and value alone, so a trial errs long.
func kneeCycleOf(info engine.Info, o engine.Options, op string, valSize int) kneeCycle {
	if op != "upsert" || !info.DataBlocks || o.MemtableMB <= 0 {
		return kneeCycle{}
	}
	return kneeCycle{memtable: int64(o.MemtableMB) << 20, perOp: int64(dataset.KeySize + valSize)}
}

// kneeCycleOn is the cycle of op on db, a copy of the engine's fixture,
// opened with that fixture's options.
func kneeCycleOn(e *core.Env, db engine.DB, op string) kneeCycle {
	info, ok := engine.Lookup(db.Name())
	if !ok {
		return kneeCycle{}
	}
	return kneeCycleOf(info, e.KVFor(info).Options, op, e.Gen.ValueSize)
}

// fills is how many memtables d at rate fills.
func (cy kneeCycle) fills(rate int, d time.Duration) float64 {
	return float64(rate) * d.Seconds() * float64(cy.perOp) / float64(cy.memtable)
}

// span is a trial's length in its log line: "2s", or "16.2s = 2.0 memtables".
func (cy kneeCycle) span(rate int, d time.Duration) string {
	if cy.memtable <= 0 {
		return d.String()
	}
	return fmt.Sprintf("%v = %.1f memtables", d, cy.fills(rate, d))
}

// trialTime is how long a trial at rate lasts: -knee_time, or with a
// memtable cycle long enough to fill -knee_flushes memtables (rounded up
// to 100ms), at most -knee_max_time.
func (c loadSettings) trialTime(rate int, cy kneeCycle) time.Duration {
	if cy.memtable <= 0 || rate <= 0 {
		return c.KneeTime
	}
	secs := float64(c.KneeFlushes) * float64(cy.memtable) / (float64(rate) * float64(cy.perOp))
	if secs >= c.KneeMaxTime.Seconds() { // also keeps a slow rate's time from overflowing
		return c.KneeMaxTime
	}
	need := time.Duration(math.Ceil(secs*10)) * (time.Second / 10)
	return min(max(c.KneeTime, need), c.KneeMaxTime)
}

// findKnee searches for the knee with trials as long as trialTime says
// for cy. It returns the highest sustained rate (0 if even the lowest
// tried failed) and, of its trials, the one with the higher p99. logf
// receives one line per trial.
func (c loadSettings) findKnee(cy kneeCycle, trial func(rate int, d time.Duration) (*load.Result, error), logf func(format string, args ...any)) (int, *load.Result, error) {
	lo, hi := 0, 0
	var best *load.Result
	// try runs rate's trials, up to the first failed one, and moves lo
	// (best: its worse trial) or hi to rate.
	try := func(rate int) error {
		d := c.trialTime(rate, cy)
		var worst *load.Result
		for n := 1; n <= kneeTrials; n++ {
			res, err := trial(rate, d)
			if err != nil {
				return err
			}
			ok := c.sustained(res)
			verdict := "sustained"
			if !ok {
				verdict = "not sustained"
			}
			logf("knee: %d ops/s for %s: achieved %.0f, %d of %d done, p99 %v: %s (trial %d of %d)", rate, cy.span(rate, d), res.Achieved(), res.Done, res.Scheduled, time.Duration(res.Latency.Percentile(99)), verdict, n, kneeTrials)
			if !ok {
				hi = rate
				return nil
			}
			if worst == nil || res.Latency.Percentile(99) > worst.Latency.Percentile(99) {
				worst = res
			}
		}
		lo, best = rate, worst
		return nil
	}
	// Doubling until a rate fails (or the next would pass maxRate), then
	// bisection between lo and hi.
	for rate := c.KneeStart; hi == 0 && lo <= maxRate/2; rate *= 2 {
		if err := try(rate); err != nil {
			return 0, nil, err
		}
	}
	for s := 0; s < c.KneeSteps && hi-lo > max(1, lo/100); s++ {
		if err := try(lo + (hi-lo)/2); err != nil {
			return 0, nil, err
		}
	}
	return lo, best, nil
}

// kneeSpread is the median, lowest and highest knee of repeated searches.
type kneeSpread struct{ median, min, max float64 }

// spreadOf summarises the knees of repeated searches (at least one).
func spreadOf(knees []float64) kneeSpread {
	s := slices.Sorted(slices.Values(knees))
	return kneeSpread{median: median(s), min: s[0], max: s[len(s)-1]}
}

// median of sorted values; 0 for none.
func median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// pct is the spread as (max-min)/median×100; ok is false when the median
// is 0 (half the searches sustained no rate), where no share is defined.
func (s kneeSpread) pct() (pct float64, ok bool) {
	if s.median <= 0 {
		return 0, false
	}
	return (s.max - s.min) / s.median * 100, true
}

// runKnee is the body of BenchmarkKnee<Engine>/op=get|upsert: one search
// per b.N iteration, each on the database dbFor gives it (untimed) with
// workers of its own; it reports the searches' median and spread.
func runKnee(b *testing.B, e *core.Env, op string, dbFor func(*testing.B) engine.DB) {
	c := loadOf(&e.Cfg)
	rs := e.CallStreams(b)
	b.ResetTimer()
	var knees, p99s []float64
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		db := dbFor(b)
		b.StartTimer()
		// Streams of their own, so each search of gets draws other keys.
		knee, res, err := kneeSearch(e, c, db, op, rs, 4000+uint64(n*c.LoadWorkers), b.Logf)
		if err != nil {
			b.Fatal(err)
		}
		knees = append(knees, float64(knee))
		if res != nil {
			p99s = append(p99s, float64(res.Latency.Percentile(99)))
		}
	}
	b.StopTimer()
	slices.Sort(p99s)
	s := spreadOf(knees)
	b.ReportMetric(0, "ns/op") // a search has no per-operation time
	b.ReportMetric(s.median, "knee-ops/s")
	b.ReportMetric(median(p99s), "knee-p99-ns")
	if b.N > 1 {
		b.ReportMetric(s.min, "knee-min-ops/s")
		b.ReportMetric(s.max, "knee-max-ops/s")
		if pct, ok := s.pct(); ok {
			b.ReportMetric(pct, "knee-spread%")
		}
	}
}

// kneeSearch is one search of op on db by c.LoadWorkers workers drawing
// from rs's streams from stream on; upserts write new keys from the data
// set's end, as on a fresh copy. logf gets one line per trial (b.Logf,
// not the progress log: its lines follow the result line, a line printed
// while the benchmark runs would split it).
func kneeSearch(e *core.Env, c loadSettings, db engine.DB, op string, rs core.Streams, stream uint64, logf func(string, ...any)) (int, *load.Result, error) {
	ws := newLoadWorkers(e, db, rs, c.LoadWorkers, stream, nil)
	defer closeLoadWorkers(ws)
	var up upserts
	trial := func(rate int, d time.Duration) (*load.Result, error) {
		lc := load.Config{Rate: float64(rate), Duration: d, Workers: c.LoadWorkers}
		if op == "get" {
			return load.Run(lc, func(w int, _ uint64) error { return ws[w].get(true) })
		}
		return up.run(e, lc, func(w int, idx uint64) error { return ws[w].put(idx) })
	}
	return c.findKnee(kneeCycleOn(e, db, op), trial, logf)
}

// leafOnCopies runs body as sub-benchmark name with fresh, which hands
// each search a database no earlier search wrote (docs/methodology.md,
// "Fixed-rate load and the knee", says why): a private copy of the fixture
// in scratch, or on the rail a freshly loaded map. The first search gets
// the one opened before the leaf starts (its settings line printed), each
// later one a new one, the one before removed first; with keep, every
// search gets the first.
func leafOnCopies(e *core.Env, b *testing.B, h *core.Handle, name string, keep bool, body func(b *testing.B, fresh func(*testing.B) engine.DB)) {
	h.Close(b) // the fixture is not read while its copy is written
	f := h.Fixture()
	name = core.BlockLeaf(name, f.Engine, h.Options(nil))
	e.WatchLeaf(b.Name() + "/" + name)
	s := &freshDBs{e: e, h: h, label: b.Name() + "/" + name, keep: keep}
	defer s.close(b)
	e.ShowFixtureSettings(f.Engine, s.open(b).Settings(), f) // a copy of the fixture
	b.Run(name, func(b *testing.B) { body(b, s.next) })
}

// freshDBs is the database leafOnCopies's searches run on, one at a time.
type freshDBs struct {
	e     *core.Env
	h     *core.Handle // the fixture's; on the rail it holds the map
	label string       // the space guard's name for the copies
	w     *workCopy    // the open copy (nil on the rail)
	db    engine.DB
	used  bool // db was handed to a search
	keep  bool // every search gets the first
}

// open opens a fresh database: a new copy of the fixture, or on the rail
// (whose handle is closed) the data set loaded anew.
func (s *freshDBs) open(b *testing.B) engine.DB {
	s.used = false
	if s.h.Fixture().Engine.Reference {
		s.db = s.h.DB(b, core.Warm, nil)
		return s.db
	}
	w, err := newWorkCopy(s.e, s.h, s.label, nil, true)
	fatalIf(b, err)
	s.w, s.db = w, w.DB
	return s.db
}

// next is the next search's database: the open one if unused, else a fresh one.
func (s *freshDBs) next(b *testing.B) engine.DB {
	if s.used && !s.keep || s.db == nil {
		s.close(b)
		s.open(b)
	}
	s.used = true
	return s.db
}

// close closes the open database and removes its copy.
func (s *freshDBs) close(tb testing.TB) {
	if s.w != nil {
		errorIf(tb, s.w.Close())
		s.w = nil
	}
	s.h.Close(tb) // the rail's map; nothing on the other engines
	s.db = nil
}
