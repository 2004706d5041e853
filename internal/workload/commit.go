package workload

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// commitWritersFlag is -commit_writers: one writers= leaf per count.
var commitWritersFlag = &core.Flag[core.WordList]{Name: "commit_writers", Default: core.WordList{"1", "8x"},
	Usage: "comma-separated numbers of goroutines committing at once in BenchmarkCommit, one writers= sub-benchmark each: a count, or Nx for N times the CPUs",
	Check: func(l core.WordList, _ *core.Config) error { _, err := commitWriters(l); return err },
	Echo: func(l core.WordList, _ *core.Config, line func(string, any)) {
		n, _ := commitWriters(l)
		counts := core.IntList(n)
		line("commit-writers", fmt.Sprintf("%s (%s on %d CPUs)", l.String(), counts.String(), runtime.NumCPU()))
	}}

// commitWriters are -commit_writers' counts, Nx as N times the CPUs.
func commitWriters(l core.WordList) ([]int, error) {
	if len(l) == 0 {
		return nil, errors.New("must list at least one count")
	}
	var out []int
	var errs []error
	for _, w := range l {
		n, err := strconv.Atoi(strings.TrimSuffix(w, "x"))
		if strings.HasSuffix(w, "x") {
			n *= runtime.NumCPU()
		}
		switch {
		case err != nil || n < 1 || n > 1024:
			errs = append(errs, core.FlagError("commit_writers", w, "must be a count from 1 to 1024, or Nx for N times the CPUs"))
		case slices.Contains(out, n):
			errs = append(errs, core.FlagError("commit_writers", l.String(), fmt.Sprintf("lists %d writers twice", n)))
		}
		out = append(out, n)
	}
	return out, errors.Join(errs...)
}

// commitScratchOps bounds the commits Commit's Scratch counts: b.N beyond
// it at the default -benchtime means under 4 µs a durable commit.
const commitScratchOps = 250_000

// Commit: durable commits of one new key each from -commit_writers
// goroutines on a fresh copy of the fixture, every key read back after a
// reopen (docs/workloads.md, "Durable commits"); an engine's
// engine.GroupCommit variants run as mode=.
func init() {
	core.Register(&core.Workload{
		Name:     "Commit",
		Engines:  core.Stores,
		Fixtures: kvFixture,
		Scratch: func(e *core.Env, _ engine.Info) int64 {
			return 3 * (e.Gen.LogicalBytes() + commitScratchOps*int64(dataset.KeySize+e.Cfg.ValSize))
		},
		Units: append(append([]core.Unit{core.Higher("commits/s"), core.Lower("dev-writes/commit"), core.Lower("dev-flushes/commit")},
			core.LatencyUnits...), timelineUnits...),
		Options: append([]core.Option{commitWritersFlag}, timelineOptions...),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			writers, _ := commitWriters(commitWritersFlag.Get(&e.Cfg)) // checked
			for _, w := range writers {
				for _, v := range core.Variants(info, engine.GroupCommit) {
					commitLeaf(b, e, h, w, v)
				}
			}
		},
	})
}

// commitLeaf runs leaf writers=W[/mode=M] on fresh copies of h's fixture.
func commitLeaf(b *testing.B, e *core.Env, h *core.Handle, writers int, v core.Variant) {
	tweak := func(o *engine.Options) {
		o.Sync = true
		if v.Tweak != nil {
			v.Tweak(o)
		}
	}
	name := e.LeafName("writers", writers)
	if v.Name != "" {
		name += "/" + v.Name
	}
	f := h.Fixture()
	scratchLeaf(b, e, f.Engine, f, name, h.Options(tweak), func(b *testing.B) {
		w, done := copyForCall(b, e, h, tweak)
		defer done()
		r, err := commitOnce(e, w.info, w.DB, w.Opts, writers, b.N, func() { b.ResetTimer(); b.StartTimer() }, b.StopTimer)
		fatalIf(b, err)
		r.report(b)
		reportIntervals(b, e, r.intervals)
	})
}

// commitRun is what one call's commits saw over its window.
type commitRun struct {
	commits   int
	elapsed   time.Duration
	lat       *measure.Recorder // every commit's latency
	intervals []measure.Interval
	dev       measure.DiskStats // the device's counters over the window
	hasDev    bool              // the database's directory has a block device under it
}

// deviceCounters reads the counters of the block device under dir, if any
// (not on tmpfs, overlay). A test counts for it.
var deviceCounters = measure.DeviceStats

// counters are the process's and the device's (under dir, if any) at a window's start.
// hasIO: the process's written bytes count the writes under dir, which
// is not on tmpfs or ramfs.
type counters struct {
	dir    string
	io     measure.IO
	dev    measure.DiskStats
	hasDev bool
	hasIO  bool
}

func readCounters(dir string) (c counters, err error) {
	c.dir = dir
	if dir != "" {
		if c.dev, c.hasDev, err = deviceCounters(dir); err != nil {
			return c, err
		}
		mem, err := measure.InMemory(dir)
		if err != nil {
			return c, err
		}
		c.hasIO = !mem
	}
	c.io, err = measure.ReadIO()
	return c, err
}

// since is the bytes the process wrote and the device's counters since c.
func (c counters) since() (written int64, dev measure.DiskStats, err error) {
	now, err := readCounters(c.dir)
	return now.io.Sub(c.io).Written(), now.dev.Sub(c.dev), err
}

// commitOnce commits n new keys (indexes e.Keys on), one a transaction,
// from writers goroutines into db, opened with o, timed from start to
// stop; then it closes db and reads every key back, reopened read-only.
func commitOnce(e *core.Env, info engine.Info, db engine.DB, o engine.Options, writers, n int, start, stop func()) (commitRun, error) {
	cs := make([]*committer, writers)
	tls := newTimelines(writers, n)
	for t := range cs {
		cs[t] = &committer{g: e.Gen, next: e.Keys + uint64(t), step: uint64(writers), vb: make([]byte, e.Gen.ValueSize), lat: measure.NewRecorder(), tl: tls[t]}
	}
	r := commitRun{commits: n}
	c0, err := readCounters(o.Dir)
	if err != nil {
		return r, err
	}
	start()
	t0 := time.Now()
	core.RunThreads(writers, n, func(t, ops int) { cs[t].run(db, ops) })
	r.elapsed = time.Since(t0)
	stop()
	if _, r.dev, err = c0.since(); err != nil {
		return r, err
	}
	r.hasDev = c0.hasDev
	r.intervals, err = measure.Intervals(tls, t0, t0.Add(r.elapsed), intervalFlag.Get(&e.Cfg))
	lats := make([]*measure.Recorder, len(cs))
	for t, c := range cs {
		if c.err != nil && err == nil {
			err = fmt.Errorf("writer %d: %w", t, c.err)
		}
		lats[t] = c.lat
	}
	if err != nil {
		db.Close()
		return r, err
	}
	r.lat = measure.Merge(lats...)
	if err := db.Close(); err != nil {
		return r, fmt.Errorf("close: %w", err)
	}
	o.ReadOnly = true // every committed key read back after a reopen
	rdb, err := engine.OpenInfo(info, o)
	if err != nil {
		return r, fmt.Errorf("reopen: %w", err)
	}
	defer rdb.Close()
	if err := readNew(rdb, e.Gen, uint64(n), 1); err != nil {
		return r, fmt.Errorf("after reopen, committed %w", err)
	}
	return r, nil
}

// committer is one goroutine's commits of keys next, next+step, ..., each
// made before its clock starts; padded so committers share no cache line.
type committer struct {
	_          [64]byte
	g          *dataset.Gen
	next, step uint64
	kb         [dataset.KeySize]byte
	vb         []byte
	lat        *measure.Recorder
	tl         *measure.Timeline
	err        error
	_          [64]byte
}

// run commits n keys; it stops at the first error, in c.err.
func (c *committer) run(db engine.DB, n int) {
	for range n {
		i := c.next
		c.next += c.step
		key, val := c.g.Key(c.kb[:], i), c.g.Value(c.vb, i)
		t0 := time.Now()
		err := engine.Put(db, key, val)
		d := time.Since(t0)
		c.lat.Record(d)
		c.tl.Add(t0, d, 1)
		if err != nil {
			c.err = fmt.Errorf("key %d: %w", i, err)
			return
		}
	}
}

// report reports the run's figures, the device's per commit where -dir
// has one (flushes where its kernel counts them).
func (r commitRun) report(b *testing.B) {
	n := float64(r.commits)
	b.ReportMetric(n/r.elapsed.Seconds(), "commits/s")
	if r.hasDev {
		b.ReportMetric(float64(r.dev.Writes)/n, "dev-writes/commit")
		if r.dev.CountsFlushes {
			b.ReportMetric(float64(r.dev.Flushes)/n, "dev-flushes/commit")
		}
	}
	r.lat.Report(b.ReportMetric) // p50-ns, p99-ns, p999-ns
}
