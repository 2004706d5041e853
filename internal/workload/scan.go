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

// Iterate: full scans, one op reading every key of the fixture in order,
// with values or keys only (badger-bench capped its scan at 2M keys; users'
// scans grow with their data); iterateCaps add a sub-benchmark level each.
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
						n := e.LeafName("cache", cache, "values", values)
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

// iterate times b.N full scans, each through a reader of its own, cold a
// round each (docs/methodology.md, "What a cold round is").
func iterate(b *testing.B, e *core.Env, h *core.Handle, db engine.DB, cache string, tweak func(*engine.Options), values bool) {
	keys := e.Gen.Keys
	chk := core.GenSource{G: e.Gen}.NewChecker(e.FullCheck)
	perScan := int64(keys) * dataset.KeySize
	if values {
		perScan += int64(keys) * int64(e.Cfg.ValSize)
	}
	o := engine.IterOptions{KeysOnly: !values, NoPrefetch: !scanPrefetchFlag.Get(&e.Cfg)}
	scanAll := func(db engine.DB) error {
		n, _, err := core.ScanAllWith(db, o, chk)
		if err == nil && n != keys {
			err = fmt.Errorf("scan read %d keys, the fixture has %d", n, keys)
		}
		return err
	}
	b.SetBytes(perScan)
	b.ReportAllocs()
	if cache == core.Cold {
		var err error
		timed := h.ColdRounds(b, tweak, func(db engine.DB) (func(), func()) {
			return func() { err = scanAll(db) }, func() { fatalIf(b, err) }
		})
		timed.Disk.Report(b, timed.Ops)
	} else {
		h.TimeLoop(b, cache, 1, core.SimFullScans, func(_, n int, _ engine.Reader) error {
			for range n {
				if err := scanAll(db); err != nil {
					return err
				}
			}
			return nil
		}, nil)
	}
	b.ReportMetric(float64(keys)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// Scan: range scans, db_bench's seekrandom and YCSB workload E: one op
// seeks to a random existing key and reads the next -scan_len entries
// (cold: docs/methodology.md, "What a cold round is").
func init() {
	core.Register(&core.Workload{
		Name:     "Scan",
		Engines:  core.Everything,
		Fixtures: kvFixture,
		Units:    append(append([]core.Unit{core.Info("keys/op"), core.Higher("keys/s")}, core.LoopUnits...), core.LatencyUnits...),
		Options:  []core.Option{scanLenFlag, scanPrefetchFlag},
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				for _, threads := range e.Cfg.Threads {
					name := e.LeafName("cache", cache, "scan_len", scanLenFlag.Get(&e.Cfg), "threads", threads)
					h.Run(b, name, cache, nil, func(b *testing.B, _ engine.DB) {
						streams := newScanStreams(e, e.CallStreams(b), threads)
						warm := func() func(t, n int, rd engine.Reader) error {
							return newScanStreams(e, e.CallStreams(b), threads).scan
						}
						reportScans(b, streams, h.TimeLoop(b, cache, threads, core.SimScans, streams.scan, warm))
					})
				}
			}
		},
	})
}

// scanPrefetchFlag is -scan_prefetch: whether an engine may fetch values
// ahead of a scan's cursor; off for every engine by rule (docs/engines.md,
// "Scans and Badger's value prefetch").
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
	Check: ints(1, 1_000_000)}

// scanStream is one scanning goroutine's seeks, kept and padded as readStream is.
type scanStream struct {
	_ [64]byte
	core.Stream
	g                   *dataset.Gen
	scanLen             int
	chk                 *dataset.Checker
	prefetch            bool // -scan_prefetch
	kb                  [dataset.KeySize]byte
	ops, entries, bytes int64
	_                   [64]byte
}

// scanStreams are a leaf's scanning goroutines' streams, one each.
type scanStreams []*scanStream

// newScanStreams makes a stream per scanning goroutine from rs, timing every seek.
func newScanStreams(e *core.Env, rs core.Streams, threads int) scanStreams {
	out := make(scanStreams, threads)
	for t, st := range rs.Threads(2000, threads, 1) {
		out[t] = &scanStream{Stream: st, g: e.Gen, scanLen: scanLenFlag.Get(&e.Cfg),
			chk: e.Gen.NewChecker(e.FullCheck), prefetch: scanPrefetchFlag.Get(&e.Cfg)}
	}
	return out
}

// scan does n seeks of goroutine t's stream through rd, each an iterator
// of its own (as an application's range read is); it stops at an error.
func (ss scanStreams) scan(t, n int, rd engine.Reader) error {
	s := ss[t]
	for i := 0; i < n; i++ {
		seek := s.g.Key(s.kb[:], s.Rand.Below(s.g.Keys))
		t0 := time.Now() // a scan is long next to a timestamp: time every one
		entries, bytes, err := scanFrom(rd, engine.IterOptions{Start: seek, NoPrefetch: !s.prefetch}, s.scanLen, seek, s.chk)
		s.Lat.Record(time.Since(t0))
		if err != nil {
			return err
		}
		s.ops++
		s.entries += entries
		s.bytes += bytes
	}
	return nil
}

// reportScans is reportReads for scanStreams.
func reportScans(b *testing.B, streams scanStreams, timed core.Timed) {
	var done, entries, bytes int64
	lats := make([]*measure.Recorder, len(streams))
	for i, s := range streams {
		done += s.ops
		entries += s.entries
		bytes += s.bytes
		lats[i] = s.Lat
	}
	reportLoop(b, timed, "seeks", done, bytes, lats)
	b.ReportMetric(float64(entries)/float64(timed.Ops), "keys/op")
	b.ReportMetric(float64(entries)/timed.Elapsed.Seconds(), "keys/s")
}

// scanFrom reads up to n entries from o.Start on: the first must be first
// (Scan: o.Start, which must exist; Delete: the first key after its
// swath), their keys must ascend and each value must be its key's.
func scanFrom(rd engine.Reader, o engine.IterOptions, n int, first []byte, chk *dataset.Checker) (entries, bytes int64, err error) {
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
		if entries == 0 && string(k) != string(first) {
			if string(first) != string(seek) {
				return 0, 0, fmt.Errorf("seek to %q landed on %q, want %q, the first key after it", seek, k, first)
			}
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

// Open times what a process pays before its first answer: opening the
// fixture read-only and one verified point read (docs/methodology.md,
// "The read benchmarks").
func init() {
	core.Register(&core.Workload{
		Name:     "Open",
		Engines:  core.Stores,
		Fixtures: kvFixture,
		Units:    []core.Unit{core.Lower("read-B/op")},
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				// The handle opens the fixture in the cache state and
				// prints its settings; the body closes it and times opens
				// of its own.
				h.Run(b, e.LeafName("cache", cache), cache, nil, func(b *testing.B, _ engine.DB) {
					openAndRead(b, e, info, h, cache)
				})
			}
		},
	})
}

func openAndRead(b *testing.B, e *core.Env, info engine.Info, h *core.Handle, cache string) {
	h.Close(b) // nothing else may hold the fixture open
	o := h.Options(nil)
	g := e.Gen
	chk := g.NewChecker(true)
	rng := e.CallStreams(b).Rand(3000)
	var kb [dataset.KeySize]byte
	var diskRead int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if cache == core.Cold {
			_, err := e.Evict(h.Dir())
			fatalIf(b, err)
		}
		idx := rng.Below(g.Keys)
		key := g.Key(kb[:], idx)
		io0, _ := measure.ReadIO()
		b.StartTimer()

		db, err := engine.Open(info.Name, o)
		if err != nil {
			b.Fatal(err)
		}
		rd, err := db.NewReader()
		if err != nil {
			b.Fatal(err)
		}
		found, err := rd.Get(key, func(v []byte) error { return chk.Check(idx, v) })

		b.StopTimer()
		io1, _ := measure.ReadIO()
		diskRead += io1.Sub(io0).ReadBytes
		if err == nil && !found {
			err = fmt.Errorf("first read: key %d not found", idx)
		}
		rd.Close()
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		fatalIf(b, err)
		b.StartTimer()
	}
	b.StopTimer()
	core.ReportReads(b, diskRead, float64(b.N))
}
