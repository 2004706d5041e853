package workload

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// ycsbWarmOps is the most operations of the mix's reads each round runs,
// untimed, before its window: an engine's caches hold what the
// distribution asks for first, on the fixture and on a fresh copy alike.
const ycsbWarmOps = 10000

// runYCSB times b.N operations of spec over dist at threads goroutines on
// db (in dir when it is a copy that writes, "" on the fixture itself).
func runYCSB(b *testing.B, e *core.Env, info engine.Info, db engine.DB, dir string, spec ycsbSpec, dist string, threads int) {
	stripes := threads
	if spec.Background {
		stripes++ // the writer's
	}
	p, err := keyDist(&e.Cfg, dist, e.Keys)
	if err != nil {
		b.Fatal(err)
	}
	sh := newYCSBShared(e.Gen, e.Keys, p, spec.Mix, b.N, stripes)
	sh.prefetch, sh.readUpd = scanPrefetchFlag.Get(&e.Cfg), updateFlag.Get(&e.Cfg) == "read"
	rs := e.CallStreams(b)
	ws := make([]*ycsbWorker, stripes)
	for t := range ws {
		ws[t] = newYCSBWorker(sh, t, db, rs, e.FullCheck)
		defer ws[t].close()
	}
	if spec.Background {
		ws[threads].readUpd = false // db_bench's writer puts blind
	}
	warmYCSB(b, e, db, sh, threads, min(b.N, ycsbWarmOps))

	var stop atomic.Bool
	writerDone := make(chan struct{})
	c0, err := readCounters(dir)
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := measure.CPUTime()
	if spec.Background { // writing before the readers start
		started := make(chan struct{})
		go func() { ws[threads].writeUntil(&stop, rwwRateFlag.Get(&e.Cfg)*1e6, started); close(writerDone) }()
		<-started
	}
	// A mix that writes keeps its operations' timeline (throughput over
	// time).
	var tls []*measure.Timeline
	if spec.Mix.writes() {
		tls = newTimelines(threads, b.N)
		for t, tl := range tls {
			ws[t].tl = tl
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	core.RunThreads(threads, b.N, func(t, n int) { ws[t].run(n) })
	elapsed := time.Since(start)
	stop.Store(true)
	if spec.Background {
		<-writerDone
	}
	b.StopTimer()
	cpu := measure.CPUTime() - cpu0
	var written int64
	for _, w := range ws {
		written += w.written
	}
	// The writes' cost includes what they left in memory: flushed
	// (compactions settled, as populate's interval ends) and synced,
	// untimed, before the counters are read.
	if dir != "" && written > 0 {
		if err := db.Flush(); err != nil {
			b.Fatalf("flush: %v", err)
		}
		if err := engine.SyncTree(dir); err != nil {
			b.Fatalf("sync: %v", err)
		}
	}
	ioWritten, dev, err := c0.since()
	if err != nil {
		b.Fatal(err)
	}
	for t, w := range ws {
		if w.err != nil {
			b.Fatalf("goroutine %d: %v", t, w.err)
		}
	}
	reportYCSB(b, ws[:threads], elapsed, cpu)
	if tls != nil {
		iv, err := measure.Intervals(tls, start, start.Add(elapsed), intervalFlag.Get(&e.Cfg))
		if err != nil {
			b.Fatal(err)
		}
		reportIntervals(b, e, iv)
	}
	if spec.Background {
		wr := ws[threads]
		b.ReportMetric(float64(wr.count[opUpdate])/elapsed.Seconds(), "write-ops/s")
		b.ReportMetric(float64(wr.lat[opUpdate].Percentile(99)), "write-p99-ns")
	}
	if dir == "" || written == 0 {
		return
	}
	// What the writes cost the device and the disk, over the window and
	// its flush: the bytes the process wrote and the device took per
	// logical byte written, and the space per logical byte of what the
	// copy holds now.
	b.ReportMetric(float64(ioWritten)/float64(written), "write-amp")
	if c0.hasDev {
		b.ReportMetric(float64(dev.WrittenBytes)/float64(written), "dev-write-amp")
	}
	lo, hi := sh.live()
	liveBytes := int64(hi-lo) * int64(dataset.KeySize+e.Cfg.ValSize)
	if sp, err := engine.SpaceOf(info, dir); err == nil && liveBytes > 0 {
		b.ReportMetric(float64(sp.Data)/float64(liveBytes), "space-amp")
	} else if err != nil {
		b.Fatal(err)
	}
}

// warmYCSB reads n keys of the distribution, untimed, with workers of
// their own, so the round's counters and streams are untouched.
func warmYCSB(b *testing.B, e *core.Env, db engine.DB, sh *ycsbShared, threads, n int) {
	if n == 0 {
		return
	}
	warm := newYCSBShared(sh.g, sh.keys, sh.dist, opMix{opRead: 100}, 0, int(sh.stripes))
	warm.space = sh.space // the round's hot keys
	rs := e.StreamsOfCall(1 << 40)
	core.RunThreads(threads, n, func(t, n int) {
		w := newYCSBWorker(warm, t, db, rs, false)
		defer w.close()
		w.run(n)
		if w.err != nil {
			b.Errorf("warm-up: %v", w.err)
		}
	})
	if b.Failed() {
		b.FailNow()
	}
}

// reportYCSB reports the window's figures and each operation type's.
func reportYCSB(b *testing.B, ws []*ycsbWorker, elapsed time.Duration, cpu time.Duration) {
	var total, scanned int64
	for _, w := range ws {
		for _, c := range w.count {
			total += c
		}
		scanned += w.scanned
	}
	if total != int64(b.N) {
		b.Fatalf("%d operations done, want %d", total, b.N)
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(total), "cpu-ns/op")
	for op := range numOps {
		var n int64
		lats := make([]*measure.Recorder, len(ws))
		for t, w := range ws {
			n += w.count[op]
			lats[t] = w.lat[op]
		}
		if n == 0 {
			continue
		}
		name := opNames[op]
		lat := measure.Merge(lats...)
		b.ReportMetric(float64(n)/elapsed.Seconds(), name+"-ops/s")
		b.ReportMetric(float64(lat.Percentile(50)), name+"-p50-ns")
		b.ReportMetric(float64(lat.Percentile(99)), name+"-p99-ns")
		b.ReportMetric(float64(lat.Percentile(99.9)), name+"-p999-ns")
		if op == opScan {
			b.ReportMetric(float64(scanned)/float64(n), "scan-keys/op")
		}
	}
}
