package workload

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// populateUnits are what every write benchmark reports, besides MB/s
// (b.SetBytes: logical bytes written per op).
var populateUnits = []core.Unit{core.Higher("keys/s"), core.Lower("write-amp"), core.Lower("dev-write-amp"), core.Lower("space-amp"),
	core.Lower("log-MB"), core.Lower("rss-growth-MB"), core.Lower("anon-growth-MB"), core.Lower("file-growth-MB"),
	core.Higher("first-keys/s"), core.Higher("last-keys/s")}

// writersFlag is -writers: Populate's concurrent writers, Batch's callers.
var writersFlag = &core.Flag[int]{Name: "writers", Default: 1,
	Usage: "goroutines writing batches concurrently in populate",
	Check: ints(1, 256)}

// populateScratch is one scratch database, up to 3x the logical bytes.
func populateScratch(e *core.Env, _ engine.Info) int64 { return 3 * e.Gen.LogicalBytes() }

// Populate: each op writes the whole data set into a fresh database
// (docs/methodology.md, "What populate measures"). Batch is the same body
// over an engine's engine.CommitMode variants, -writers callers: seed
// 001's LMDB Env.Update ("SimpleBatched") against a write transaction on
// a locked OS thread ("TxnBatched"), and bbolt's DB.Update against
// DB.Batch, the switch badger-bench made for bbolt.
func init() {
	core.Register(&core.Workload{
		Name:    "Populate",
		Engines: core.Stores,
		Scratch: populateScratch,
		Units:   populateUnits,
		Options: []core.Option{writersFlag},
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			// With per-commit durability off and on, so the cost of sync
			// is measured for every engine rather than assumed.
			for _, sync := range []bool{false, true} {
				n := e.LeafName("batch", e.Cfg.Batch, "sync", sync)
				runPopulate(b, e, info, n, func(o *engine.Options) { o.Sync = sync })
			}
		},
	})
	core.Register(&core.Workload{
		Name:        "Batch",
		EngineFirst: true,
		Engines:     func(i engine.Info) bool { return !i.Reference && len(i.DimsWith(engine.CommitMode)) > 0 },
		Scratch:     populateScratch,
		Units:       populateUnits,
		Options:     []core.Option{writersFlag},
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			for _, v := range core.Variants(info, engine.CommitMode) {
				n := v.Name + "/" + core.SubName("writers", writersFlag.Get(&e.Cfg), "valsz", e.Cfg.ValSize, "batch", e.Cfg.Batch, "sync", e.Cfg.Sync)
				runPopulate(b, e, info, n, v.Tweak)
			}
		},
	})
}

// runPopulate runs populate as leaf sub with the run's options, tweaked.
func runPopulate(b *testing.B, e *core.Env, info engine.Info, sub string, tweak func(*engine.Options)) {
	opts := e.Options(info, "", e.Gen.LogicalBytes())
	tweak(&opts)
	scratchLeaf(b, e, info, nil, sub, opts, func(b *testing.B) { populate(b, e, info, opts) })
}

// populateStats is what one write of the data set cost (writeOnce).
type populateStats struct {
	elapsed time.Duration
	times   core.WriteTimes // the write loop's first and last tenth
	space   engine.Space    // after Close
	written int64           // bytes dirtied less those cancelled (/proc/self/io)
	dev     int64           // written to the device under -dir (/proc/diskstats)
	hasDev  bool            // -dir has a block device under it
	hasIO   bool            // written counts -dir's writes: not tmpfs or ramfs
	mem     measure.RSS     // growth of each kind's peak over the baseline
}

// memSamplePeriod is how often populate samples anonymous and file-backed
// resident memory (the kernel keeps only the total's peak).
const memSamplePeriod = 20 * time.Millisecond

// writeOnce times and counts one write of src (WriteAllTimed from
// -writers goroutines, its timeline's interval every, under a space guard
// named label) into opts.Dir over the interval of docs/methodology.md,
// "What populate measures": from the open of a fresh database (or with
// from set, the first write to a copy of fixture from, made and opened
// before) to the fsync after Close, calling start and stop at its ends.
func writeOnce(e *core.Env, info engine.Info, opts engine.Options, from string, src core.Source, every time.Duration, label, writeLabel string, start, stop func()) (populateStats, error) {
	var st populateStats
	dir := opts.Dir
	if from != "" {
		if err := copyFixture(from, dir); err != nil {
			return st, err
		}
	}
	g, err := e.GuardSpace(label, info, opts)
	if err != nil {
		return st, err
	}
	defer g.Stop()
	var db engine.DB // opened outside the interval for a copy, inside for a fresh one
	open := func() error {
		inner, err := engine.OpenInfo(info, opts)
		if err == nil {
			db = g.Wrap(inner)
		}
		return err
	}
	if from != "" {
		if err := open(); err != nil {
			return st, err
		}
		defer db.Close()
	}
	engine.ReleaseMemory()
	base, err := measure.ReadRSS()
	if err != nil {
		return st, err
	}
	mem, err := measure.StartMemSampler(memSamplePeriod)
	if err != nil {
		return st, err
	}
	defer mem.Stop()
	c0, err := readCounters(dir)
	if err != nil {
		return st, err
	}
	start()
	t0 := time.Now()
	if from == "" {
		if err := open(); err != nil {
			return st, err
		}
		defer db.Close()
	}
	if st.times, err = e.WriteAllTimed(db, src, e.Cfg.Batch, writersFlag.Get(&e.Cfg), every, writeLabel); err != nil {
		return st, err
	}
	if err := db.Flush(); err != nil {
		return st, fmt.Errorf("flush: %w", err)
	}
	if err := db.Close(); err != nil {
		return st, fmt.Errorf("close: %w", err)
	}
	if err := engine.SyncTree(dir); err != nil {
		return st, fmt.Errorf("sync: %w", err)
	}
	st.elapsed = time.Since(t0)
	stop()
	peak, err := mem.Stop()
	if err != nil {
		return st, err
	}
	st.mem = measure.RSS{Anon: peak.Anon - base.Anon, File: peak.File - base.File, Peak: peak.Peak - base.Total()}
	written, dev, err := c0.since()
	if err != nil {
		return st, err
	}
	st.written, st.dev, st.hasDev, st.hasIO = written, dev.WrittenBytes, c0.hasDev, c0.hasIO
	st.space, err = engine.SpaceOf(info, dir)
	return st, err
}

// populate is the body of Populate and Batch: each op a writeOnce into a fresh database.
func populate(b *testing.B, e *core.Env, info engine.Info, opts engine.Options) {
	label := info.Name + " populate"
	writeOps(b, e, info, opts, true, func(o engine.Options, start, stop func()) (populateStats, error) {
		return writeOnce(e, info, o, "", core.GenSource{G: e.Gen}, 0, label, label, start, stop)
	})
}

// writeOps runs b.N ops of a write benchmark, each once into a new
// scratch directory (o.Dir) removed afterwards, and reports their tally.
func writeOps(b *testing.B, e *core.Env, info engine.Info, opts engine.Options, memory bool, once func(o engine.Options, start, stop func()) (populateStats, error)) writeTally {
	b.SetBytes(e.Gen.LogicalBytes())
	var tally writeTally
	core.TimeInParts(b, func(start, stop func()) {
		for n := 0; n < b.N; n++ {
			o := opts
			o.Dir = e.ScratchDir(info.Name)
			st, err := once(o, start, stop)
			if rerr := e.Root.RemoveAll(o.Dir); err == nil {
				err = rerr
			}
			fatalIf(b, err)
			tally.add(st)
		}
	})
	tally.report(b, e.Keys, e.Gen.LogicalBytes(), memory)
	return tally
}

// writeTally adds up the ops of a writing benchmark (writeOnce's).
type writeTally struct {
	sum         populateStats
	first, last float64 // sums of the ops' write-loop rates
	ops         int
	intervals   []measure.Interval // the ops' write loops', back to back
}

func (t *writeTally) add(st populateStats) {
	t.ops++
	t.sum.elapsed += st.elapsed
	t.sum.written += st.written
	t.sum.dev += st.dev
	t.sum.hasDev, t.sum.hasIO = st.hasDev, st.hasIO
	t.sum.space.Data += st.space.Data
	t.sum.space.Logs += st.space.Logs
	t.sum.mem.Peak = max(t.sum.mem.Peak, st.mem.Peak)
	t.sum.mem.Anon = max(t.sum.mem.Anon, st.mem.Anon)
	t.sum.mem.File = max(t.sum.mem.File, st.mem.File)
	t.first += st.times.FirstRate
	t.last += st.times.LastRate
	var shift time.Duration
	if n := len(t.intervals); n > 0 {
		shift = t.intervals[n-1].End
	}
	for _, x := range st.times.Intervals {
		x.Start, x.End = x.Start+shift, x.End+shift
		t.intervals = append(t.intervals, x)
	}
}

// report reports the tally of ops that each wrote keys entries of logical bytes, with memory its growths.
func (t *writeTally) report(b *testing.B, keys uint64, logical int64, memory bool) {
	if t.ops == 0 {
		return
	}
	ops := float64(t.ops)
	sum := t.sum
	perLogical := func(v int64) float64 { return float64(v) / (float64(logical) * ops) }
	b.ReportMetric(float64(keys)*ops/sum.elapsed.Seconds(), "keys/s")
	if sum.hasIO {
		b.ReportMetric(perLogical(sum.written), "write-amp")
	}
	if sum.hasDev {
		b.ReportMetric(perLogical(sum.dev), "dev-write-amp")
	}
	b.ReportMetric(perLogical(sum.space.Data), "space-amp")
	b.ReportMetric(float64(sum.space.Logs)/ops/(1<<20), "log-MB")
	if memory {
		b.ReportMetric(float64(sum.mem.Peak)/(1<<20), "rss-growth-MB")
		b.ReportMetric(float64(sum.mem.Anon)/(1<<20), "anon-growth-MB")
		b.ReportMetric(float64(sum.mem.File)/(1<<20), "file-growth-MB")
	}
	// The write loop's rate over its first and its last tenth of keys
	// (means over the ops): seed 001 saw LMDB's fall from 1M keys/min to
	// 200k as the data outgrew memory.
	if t.first > 0 && t.last > 0 {
		b.ReportMetric(t.first/ops, "first-keys/s")
		b.ReportMetric(t.last/ops, "last-keys/s")
	}
}

// Throughput over time, for the writes that can stall (Overwrite's timed
// pass, YCSB with writes, Commit): docs/methodology.md, "Throughput over
// time".

var intervalFlag = &core.Flag[time.Duration]{Name: "interval", Default: 100 * time.Millisecond,
	Usage: "interval of the writes' throughput over time (Overwrite, YCSB with writes, Commit): commits a second and p99 in each, the stall figures stall% and worst-interval-x, and with -latency_dir a .tsv of them per leaf",
	Check: core.Within(time.Millisecond, math.MaxInt64, "must be at least 1ms")}

// timelineOptions are the flags of the workloads that keep a timeline.
var timelineOptions = []core.Option{intervalFlag, latencyDirFlag}

// timelineUnits are their stall figures.
var timelineUnits = []core.Unit{core.Lower("stall%"), core.Higher("worst-interval-x")}

// newTimelines makes a timeline per writer, room for its share of ops.
func newTimelines(writers int, ops int) []*measure.Timeline {
	tls := make([]*measure.Timeline, writers)
	for w := range tls {
		tls[w] = measure.NewTimeline(ops/writers + 1)
	}
	return tls
}

// reportIntervals reports the stall figures of a window's intervals, if
// long enough to judge (measure.Stalls), and writes <latency_dir>/<name>.tsv.
func reportIntervals(b *testing.B, e *core.Env, iv []measure.Interval) {
	if stalled, worst, ok := measure.Stalls(iv); ok {
		b.ReportMetric(stalled, "stall%")
		b.ReportMetric(worst, "worst-interval-x")
	}
	fatalIf(b, writeLatencyFile(e, b.Name(), ".tsv", func(f io.Writer) error { return measure.WriteIntervals(f, b.Name(), iv) }))
}

// writeLatencyFile writes <latency_dir>/<name><ext> with write, the name
// made file-name safe; nothing without -latency_dir.
func writeLatencyFile(e *core.Env, name, ext string, write func(io.Writer) error) error {
	dir := latencyDirFlag.Get(&e.Cfg)
	if dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+ext))
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
