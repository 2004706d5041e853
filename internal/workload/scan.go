package workload

import (
	"fmt"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Iterate: full scans. One op reads every key of the fixture in order,
// with values or keys only. badger-bench capped its scan at 2M keys; this
// reads them all, so the cost of a scan grows with the data as it does
// for users. An engine's dimensions for "Iterate" (LMDB's memory map with
// and without OS readahead, which seed 001 found decides a cold scan by
// an order of magnitude) add a sub-benchmark level each.
func init() {
	core.Register(&core.Workload{
		Name:     "Iterate",
		Engines:  core.Everything,
		Fixtures: kvFixture,
		Units:    append([]core.Unit{core.Higher("keys/s"), core.Lower("open-ms"), core.Lower("open-read-B")}, core.DiskUnits...),
		Options:  []core.Option{scanPrefetchFlag},
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				for _, values := range []bool{true, false} {
					for _, v := range core.Variants(info, iterateCaps...) {
						n := e.Shape() + "/" + core.SubName("cache", cache, "values", values)
						if v.Name != "" {
							n += "/" + v.Name
						}
						h.Run(b, n, cache, v.Tweak, func(b *testing.B, db engine.DB) {
							iterate(b, e, h, db, cache, v.Tweak, values)
						})
					}
				}
			}
		},
	})
}

// iterOpts is a full scan's iterator: values or keys only, values read
// ahead only under -scan_prefetch.
func iterOpts(e *core.Env, values bool) engine.IterOptions {
	return engine.IterOptions{KeysOnly: !values, NoPrefetch: !scanPrefetchFlag.Get(&e.Cfg)}
}

// iterate times b.N full scans. In the cold state every scan is a round
// of its own (ColdRounds): it starts from a closed, evicted, reopened
// fixture; reopening is not timed, its cost is reported as open-ms and
// open-read-B, and its disk reads are not counted in read-B/op.
func iterate(b *testing.B, e *core.Env, h *core.Handle, db engine.DB, cache string, tweak func(*engine.Options), values bool) {
	keys := e.Gen.Keys
	chk := core.GenSource{G: e.Gen}.NewChecker(e.FullCheck)
	perScan := int64(keys) * dataset.KeySize
	if values {
		perScan += int64(keys) * int64(e.Cfg.ValSize)
	}
	var n uint64
	var err error
	check := func() {
		if err != nil {
			b.Fatal(err)
		}
		if n != keys {
			b.Fatalf("scan read %d keys, the fixture has %d", n, keys)
		}
	}
	b.SetBytes(perScan)
	b.ReportAllocs()
	var disk core.DiskCounters
	if cache == core.Cold {
		timed := h.ColdRounds(b, tweak, func(db engine.DB) (func(), func()) {
			return func() { n, _, err = core.ScanAllWith(db, iterOpts(e, values), chk) }, check
		})
		disk = timed.Disk
	} else {
		b.ResetTimer()
		sim := core.StartSim(b)
		for i := 0; i < b.N; i++ {
			d0 := core.SampleDisk()
			n, _, err = core.ScanAllWith(db, iterOpts(e, values), chk)
			disk = disk.Add(core.SampleDisk().Sub(d0))
			check()
		}
		sim.Stop()
		b.StopTimer()
	}
	b.ReportMetric(float64(keys)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	disk.Report(b, int64(b.N))
}

// Scan: range scans, db_bench's seekrandom and YCSB workload E. One op
// seeks to a random existing key and reads the next -scan_len entries;
// cold, one op is a round of -cold_ops of them on a fixture just evicted
// and reopened (ColdRounds), and every per-op figure is still per seek.
func init() {
	core.Register(&core.Workload{
		Name:     "Scan",
		Engines:  core.Everything,
		Fixtures: kvFixture,
		Units: append(append([]core.Unit{core.Info("keys/op"), core.Higher("keys/s"), core.Lower("sched-p99-ns"),
			core.Lower("open-ms"), core.Lower("open-read-B")}, core.DiskUnits...), core.LatencyUnits...),
		Options: []core.Option{scanLenFlag, scanPrefetchFlag},
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				for _, threads := range e.Cfg.Threads {
					n := e.Shape() + "/" + core.SubName("cache", cache, "scan_len", scanLenFlag.Get(&e.Cfg), "threads", threads)
					h.Run(b, n, cache, nil, func(b *testing.B, db engine.DB) {
						if cache == core.Cold {
							scanCold(b, e, h, threads)
						} else {
							scan(b, e, db, threads)
						}
					})
				}
			}
		},
	})
}

// scanPrefetchFlag is -scan_prefetch: whether an engine may fetch values
// ahead of a scan's cursor. Off, the rule for every engine: a scan reads
// a value when it asks for it, which is all that Pebble, RocksDB, bbolt
// and LMDB can do (the value sits in the block or page the key came
// from). Badger alone fetches ahead (PrefetchValues), a goroutine per
// item, which pays off when values live in its value log
// (-badger_vthreshold below -valsz) and costs several times the scan
// when they are inline, as at its default threshold (docs/engines.md,
// "Scans and Badger's value prefetch"). Seed 000's Prefetch sweeps it.
var scanPrefetchFlag = &core.Flag[bool]{Name: "scan_prefetch",
	Usage: "let engines fetch values ahead of a scan's cursor (Badger's PrefetchValues, the only engine that has it) in Scan, Iterate and YCSB's scans; off, every engine reads a value when the scan asks for it",
	Echo: func(on bool, _ *core.Config, line func(string, any)) {
		if on {
			line("scan-prefetch", "true (Badger fetches values ahead of Scan's, Iterate's and YCSB's iterators: PrefetchValues, 100 items)")
			return
		}
		line("scan-prefetch", "false (every engine reads a value when the scan asks for it: Badger's PrefetchValues off in Scan, Iterate and YCSB)")
	}}

// scanLenFlag is -scan_len: the entries each seek reads.
var scanLenFlag = &core.Flag[int]{Name: "scan_len", Default: 100,
	Usage: "entries read after each seek in BenchmarkScan",
	Check: func(n int, _ *core.Config) error { return intRange(n, 1, 1_000_000) }}

// scanStream is one scanning goroutine's seeks: its own random keys,
// checker, latencies and tally, kept across the rounds of a cold leaf.
// Padded like readStream.
type scanStream struct {
	_                   [64]byte
	g                   *dataset.Gen
	scanLen             int
	rng                 dataset.Rand
	chk                 *dataset.Checker
	lat                 *measure.Recorder
	prefetch            bool // -scan_prefetch
	kb                  [dataset.KeySize]byte
	ops, entries, bytes int64
	err                 error
	_                   [64]byte
}

// newScanStreams makes one stream per scanning goroutine from the round's
// streams rs.
func newScanStreams(e *core.Env, rs core.Streams, lats []*measure.Recorder) []*scanStream {
	out := make([]*scanStream, len(lats))
	for t := range out {
		out[t] = &scanStream{g: e.Gen, scanLen: scanLenFlag.Get(&e.Cfg), rng: rs.Rand(uint64(t) + 2000),
			chk: e.Gen.NewChecker(e.FullCheck), lat: lats[t], prefetch: scanPrefetchFlag.Get(&e.Cfg)}
	}
	return out
}

// scan does n seek-and-read-next operations through rd; it stops at the
// first error, in s.err.
func (s *scanStream) scan(rd engine.Reader, n int) {
	for i := 0; i < n; i++ {
		seek := s.g.Key(s.kb[:], s.rng.Below(s.g.Keys))
		t0 := time.Now() // a scan is long next to a timestamp: time every one
		entries, bytes, err := scanFrom(rd, engine.IterOptions{Start: seek, NoPrefetch: !s.prefetch}, s.scanLen, s.chk)
		s.lat.Record(time.Since(t0))
		if err != nil {
			s.err = err
			return
		}
		s.ops++
		s.entries += entries
		s.bytes += bytes
	}
}

// scan times b.N seek-and-read-next operations over threads goroutines,
// warm. Each op opens an iterator at its start key, as a range read in an
// application does; every entry's value is checked against its key and
// the first entry must be the key sought.
func scan(b *testing.B, e *core.Env, db engine.DB, threads int) {
	readers, lats := core.NewReaders(b, db, threads)
	streams := newScanStreams(e, e.CallStreams(b), lats)
	timed := core.TimeLoop(b, threads, core.SimScans, func(t, n int) { streams[t].scan(readers[t], n) },
		func() (func(t, n int), func()) {
			warm := newScanStreams(e, e.CallStreams(b), newRecorders(threads))
			return func(t, n int) { warm[t].scan(readers[t], n) }, func() {
				for _, s := range warm {
					if s.err != nil {
						b.Fatalf("warm-up scan: %v", s.err)
					}
				}
			}
		})
	reportScans(b, streams, int64(b.N), timed.Elapsed, timed.Disk)
}

// scanCold times b.N cold rounds of -cold_ops seeks each, split across
// threads, as readRandomCold does reads.
func scanCold(b *testing.B, e *core.Env, h *core.Handle, threads int) {
	perRound := e.Cfg.ColdRoundOps()
	streams := newScanStreams(e, e.CallStreams(b), newRecorders(threads))
	timed := h.ColdReaders(b, threads, perRound, func(t, n int, rd engine.Reader) { streams[t].scan(rd, n) })
	ops := int64(b.N) * int64(perRound)
	timed.ReportPerOp(b, ops)
	reportScans(b, streams, ops, timed.Elapsed, timed.Disk)
}

// reportScans checks the streams' tallies (ops seeks in all) and reports
// their figures over the timed elapsed and disk bytes.
func reportScans(b *testing.B, streams []*scanStream, ops int64, elapsed time.Duration, disk core.DiskCounters) {
	var done, entries, bytes int64
	lats := make([]*measure.Recorder, len(streams))
	for i, s := range streams {
		if s.err != nil {
			b.Fatalf("scanner %d: %v", i, s.err)
		}
		done += s.ops
		entries += s.entries
		bytes += s.bytes
		lats[i] = s.lat
	}
	if done != ops {
		b.Fatalf("%d seeks done, want %d", done, ops)
	}
	b.ReportMetric(float64(entries)/float64(ops), "keys/op")
	b.ReportMetric(float64(entries)/elapsed.Seconds(), "keys/s")
	b.ReportMetric(float64(bytes)/1e6/elapsed.Seconds(), "MB/s")
	disk.Report(b, ops)
	measure.Merge(lats...).Report(b.ReportMetric)
}

// scanFrom reads up to n entries from o.Start, which must exist; their
// keys must ascend.
func scanFrom(rd engine.Reader, o engine.IterOptions, n int, chk *dataset.Checker) (entries, bytes int64, err error) {
	seek := o.Start
	it, err := rd.NewIter(o)
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	var prev [dataset.KeySize]byte
	for ; it.Valid() && entries < int64(n); it.Next() {
		k := it.Key()
		if entries > 0 && string(k) <= string(prev[:]) {
			// A copy, so prev does not escape: no allocation per scan.
			return entries, bytes, core.ErrOrder(append([]byte(nil), prev[:]...), k)
		}
		copy(prev[:], k)
		v, err := it.Value()
		if err != nil {
			return entries, bytes, err
		}
		if entries == 0 && string(k) != string(seek) {
			return 0, 0, fmt.Errorf("seek to %q landed on %q", seek, k)
		}
		if err := chk.CheckKV(k, v); err != nil {
			return entries, bytes, err
		}
		entries++
		bytes += int64(len(k) + len(v))
	}
	if err := it.Err(); err != nil {
		return entries, bytes, err
	}
	if entries == 0 {
		return 0, 0, fmt.Errorf("seek to %q found nothing", seek)
	}
	return entries, bytes, nil
}

// iterateCaps: a full scan sweeps OS readahead on the engines that map
// their file (seed 001 found it decides a cold scan).
var iterateCaps = []engine.Capability{engine.MapReadahead}
