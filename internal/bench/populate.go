package bench

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// populateUnits are what every write benchmark reports, besides MB/s
// (b.SetBytes: logical bytes written per op).
var populateUnits = []Unit{Higher("keys/s"), Lower("write-amp"), Lower("space-amp"), Lower("peak-rss-MB"),
	Higher("first-keys/s"), Higher("last-keys/s")}

// populateScratch is one scratch database at a time, up to three times
// the logical size of the data set.
func populateScratch(e *Env, _ engine.Info) int64 { return 3 * e.Gen.LogicalBytes() }

// Populate: each op writes the whole data set into a fresh database in
// batches of -batch through the engine's native batch path, from -writers
// goroutines, then flushes (durable, compactions settled) and closes it.
//
// Batch (BenchmarkLmdbBatch, BenchmarkBoltBatch) is the same body over
// the variants of an engine's batch commit path (its "Batch" dimensions):
// seed 001's comparison of LMDB's Env.Update ("SimpleBatched") with a
// hand-driven write transaction on a locked OS thread ("TxnBatched"), and
// bbolt's DB.Update (one transaction per batch) with DB.Batch (concurrent
// callers coalesced into one transaction), the switch badger-bench made
// for bbolt; -writers sets the number of concurrent callers.
func init() {
	Register(&Workload{
		Name:    "Populate",
		Engines: Stores,
		Step:    "write",
		Scratch: populateScratch,
		Units:   populateUnits,
		Run: func(b *testing.B, e *Env, info engine.Info) {
			// With per-commit durability off and on, so the cost of sync
			// is measured for every engine rather than assumed.
			for _, sync := range []bool{false, true} {
				n := e.Shape() + "/" + name("batch", e.Cfg.Batch, "sync", sync)
				runPopulate(b, e, info, n, func(o *engine.Options) { o.Sync = sync })
			}
		},
	})
	Register(&Workload{
		Name:        "Batch",
		EngineFirst: true,
		Engines:     func(i engine.Info) bool { return !i.Reference && len(i.DimsFor("Batch")) > 0 },
		Scratch:     populateScratch,
		Units:       populateUnits,
		Run: func(b *testing.B, e *Env, info engine.Info) {
			for _, v := range Variants(info, "Batch") {
				n := v.Name + "/" + name("writers", e.Cfg.Writers, "valsz", e.Cfg.ValSize, "batch", e.Cfg.Batch, "sync", e.Cfg.Sync)
				runPopulate(b, e, info, n, v.Tweak)
			}
		},
	})
}

// runPopulate runs populate as sub-benchmark sub with the run's options as
// tweak changes them, after printing the engine's settings for exactly
// those options.
func runPopulate(b *testing.B, e *Env, info engine.Info, sub string, tweak func(*engine.Options)) {
	opts := e.Cfg.Options(info, "", e.Gen.LogicalBytes())
	tweak(&opts)
	s, err := e.scratchSettings(info, opts)
	if err != nil {
		b.Fatal(err)
	}
	e.ShowSettings(info, s)
	b.Run(sub, func(b *testing.B) { populate(b, e, info, opts) })
}

// populateStats is what one full write of the data set cost.
type populateStats struct {
	elapsed   time.Duration // writes and the final Flush
	times     WriteTimes    // the write loop's first and last tenth
	diskBytes int64         // on disk after Flush
	io        measure.IO    // from open to close
}

// populateOnce opens a fresh database with opts, writes every key of the
// data set in batches through the engine's native batch path, flushes
// (durable, compactions settled), and closes it. onOpen, when set, is
// called once the database is open, before the clock starts.
func (e *Env) populateOnce(info engine.Info, opts engine.Options, label string, onOpen func()) (populateStats, error) {
	var st populateStats
	io0, err := measure.ReadIO()
	if err != nil {
		return st, err
	}
	db, err := engine.Open(info.Name, opts)
	if err != nil {
		return st, err
	}
	defer db.Close()
	if onOpen != nil {
		onOpen()
	}
	start := time.Now()
	if st.times, err = e.writeAll(db, GenSource{e.Gen}, e.Cfg.Batch, e.Cfg.Writers, label); err != nil {
		return st, err
	}
	if err := db.Flush(); err != nil {
		return st, fmt.Errorf("flush: %w", err)
	}
	st.elapsed = time.Since(start)
	if st.diskBytes, err = db.Size(); err != nil {
		return st, err
	}
	if err := db.Close(); err != nil {
		return st, fmt.Errorf("close: %w", err)
	}
	io1, err := measure.ReadIO()
	st.io = io1.Sub(io0)
	return st, err
}

// populate is the body of every write benchmark: each op writes the whole
// data set into a fresh database opened with opts; the database is removed
// afterwards.
func populate(b *testing.B, e *Env, info engine.Info, opts engine.Options) {
	logical := e.Gen.LogicalBytes()
	b.SetBytes(logical)
	var wrote, onDisk int64
	var elapsed time.Duration
	var peak int64
	var first, last float64
	b.StopTimer()
	for n := 0; n < b.N; n++ {
		dir := e.ScratchDir(info.Name)
		o := opts
		o.Dir = dir
		runtime.GC()
		measure.ResetPeakRSS()
		st, err := e.populateOnce(info, o, info.Name+" populate", b.StartTimer)
		b.StopTimer()
		if err != nil {
			e.Root.RemoveAll(dir)
			b.Fatal(err)
		}
		if m, err := measure.ReadMem(); err == nil {
			peak = max(peak, m.PeakRSS)
		}
		wrote += st.io.WriteBytes
		onDisk += st.diskBytes
		elapsed += st.elapsed
		first += st.times.FirstRate
		last += st.times.LastRate
		if err := e.Root.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
	}
	ops := float64(b.N)
	b.ReportMetric(float64(e.Keys)*ops/elapsed.Seconds(), "keys/s")
	b.ReportMetric(float64(wrote)/(float64(logical)*ops), "write-amp")
	b.ReportMetric(float64(onDisk)/(float64(logical)*ops), "space-amp")
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MB")
	// The write loop's rate over its first and its last tenth of keys
	// (means over the ops): seed 001 saw LMDB's fall from 1M keys/min to
	// 200k as the data outgrew memory.
	if first > 0 && last > 0 {
		b.ReportMetric(first/ops, "first-keys/s")
		b.ReportMetric(last/ops, "last-keys/s")
	}
}
