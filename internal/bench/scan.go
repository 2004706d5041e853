package bench

import (
	"fmt"
	"testing"
	"time"

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
	Register(&Workload{
		Name:     "Iterate",
		Engines:  Everything,
		Fixtures: kvFixture,
		Step:     "read",
		Units:    []Unit{Higher("keys/s"), Lower("read-B/op")},
		Run: func(b *testing.B, e *Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				for _, values := range []bool{true, false} {
					for _, v := range Variants(info, "Iterate") {
						n := name("valsz", e.Cfg.ValSize, "cache", cache, "values", values)
						if v.Name != "" {
							n += "/" + v.Name
						}
						h.Run(b, n, cache, v.Tweak, func(b *testing.B, db engine.DB) {
							iterate(b, e, h, db, info, cache, v.Tweak, values)
						})
					}
				}
			}
		},
	})
}

// iterate times b.N full scans. In the cold state every scan starts from
// a closed, evicted, reopened fixture; reopening is not timed, and its disk
// reads are not counted in read-B/op.
func iterate(b *testing.B, e *Env, h *Handle, db engine.DB, info engine.Info, cache string, tweak func(*engine.Options), values bool) {
	keys := e.Gen.Keys
	chk := GenSource{e.Gen}.NewChecker(e.FullCheck)
	perScan := int64(keys) * dataset.KeySize
	if values {
		perScan += int64(keys) * int64(e.Cfg.ValSize)
	}
	// own is a db this body reopened itself for a cold scan; the handle's
	// is closed by then, so only one is ever open (LMDB forbids two).
	var own engine.DB
	defer func() {
		if own != nil {
			own.Close()
		}
	}()
	b.SetBytes(perScan)
	b.ReportAllocs()
	var diskRead int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cache == Cold && i > 0 {
			b.StopTimer()
			if own != nil {
				err := own.Close()
				own = nil
				if err != nil {
					b.Fatalf("close %s: %v", info.Name, err)
				}
			} else {
				h.Close(b)
			}
			if _, err := e.Evict(h.Dir()); err != nil {
				b.Fatal(err)
			}
			var err error
			if own, err = engine.Open(info.Name, h.Options(tweak)); err != nil {
				b.Fatalf("open fixture %s: %v", h.Dir(), err)
			}
			db = own
			b.StartTimer()
		}
		io0, _ := measure.ReadIO()
		n, _, err := ScanAll(db, values, chk)
		io1, _ := measure.ReadIO()
		diskRead += io1.Sub(io0).ReadBytes
		if err != nil {
			b.Fatal(err)
		}
		if n != keys {
			b.Fatalf("scan read %d keys, the fixture has %d", n, keys)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(keys)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	b.ReportMetric(float64(diskRead)/float64(b.N), "read-B/op")
}

// Scan: range scans, db_bench's seekrandom and YCSB workload E. One op
// seeks to a random existing key and reads the next -scan_len entries.
func init() {
	Register(&Workload{
		Name:     "Scan",
		Engines:  Everything,
		Fixtures: kvFixture,
		Step:     "read",
		Units: append([]Unit{Info("keys/op"), Higher("keys/s"), Lower("read-B/op")},
			latencyUnits...),
		Run: func(b *testing.B, e *Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				for _, threads := range e.Cfg.Threads {
					n := name("valsz", e.Cfg.ValSize, "cache", cache, "scan_len", e.Cfg.ScanLen, "threads", threads)
					h.Run(b, n, cache, nil, func(b *testing.B, db engine.DB) { scan(b, e, db, threads) })
				}
			}
		},
	})
}

// scanResult is one scanning goroutine's tally, padded like readResult.
type scanResult struct {
	entries, bytes int64
	err            error
	_              [64]byte
}

// scan times b.N seek-and-read-next operations over threads goroutines.
// Each op opens an iterator at its start key, as a range read in an
// application does; every entry's value is checked against its key and
// the first entry must be the key sought.
func scan(b *testing.B, e *Env, db engine.DB, threads int) {
	g := e.Gen
	scanLen := e.Cfg.ScanLen
	results := make([]scanResult, threads)
	readers, lats := NewReaders(b, db, threads)
	io0, _ := measure.ReadIO()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	RunThreads(threads, b.N, func(t, n int) {
		res := &results[t]
		rd, lat := readers[t], lats[t]
		rng := dataset.NewRand(e.Cfg.Seed, uint64(t)+2000)
		chk := g.NewChecker(e.FullCheck)
		var kb [dataset.KeySize]byte
		for op := 0; op < n; op++ {
			seek := g.Key(kb[:], rng.Below(g.Keys))
			t0 := time.Now() // a scan is long next to a timestamp: time every one
			entries, bytes, err := scanFrom(rd, seek, scanLen, chk)
			lat.Record(time.Since(t0))
			if err != nil {
				res.err = err
				return
			}
			res.entries += entries
			res.bytes += bytes
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	io1, _ := measure.ReadIO()
	var entries, bytes int64
	for i := range results {
		if results[i].err != nil {
			b.Fatalf("scanner %d: %v", i, results[i].err)
		}
		entries += results[i].entries
		bytes += results[i].bytes
	}
	b.ReportMetric(float64(entries)/float64(b.N), "keys/op")
	b.ReportMetric(float64(entries)/elapsed.Seconds(), "keys/s")
	b.ReportMetric(float64(bytes)/1e6/elapsed.Seconds(), "MB/s")
	b.ReportMetric(float64(io1.Sub(io0).ReadBytes)/float64(b.N), "read-B/op")
	measure.Merge(lats...).Report(b.ReportMetric)
}

// scanFrom reads up to n entries from seek, which must exist; their keys
// must ascend.
func scanFrom(rd engine.Reader, seek []byte, n int, chk *dataset.Checker) (entries, bytes int64, err error) {
	it, err := rd.NewIter(engine.IterOptions{Start: seek})
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	var prev [dataset.KeySize]byte
	for ; it.Valid() && entries < int64(n); it.Next() {
		k := it.Key()
		if entries > 0 && string(k) <= string(prev[:]) {
			// A copy, so prev does not escape: no allocation per scan.
			return entries, bytes, ErrOrder(append([]byte(nil), prev[:]...), k)
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
