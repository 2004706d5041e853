package kvbench

import (
	"fmt"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Full scans: one op reads every key of the fixture in order, with values
// or keys only. badger-bench capped its scan at 2M keys; this reads them
// all, so the cost of a scan grows with the data as it does for users.

func errOrder(prev, k []byte) error {
	return fmt.Errorf("keys out of order: %q after %q", k, prev)
}

func errForeignKey(k []byte) error {
	return fmt.Errorf("key %q is not in the data set", k)
}

// iterVariants are the settings a full scan is run with for an engine:
// LMDB's memory map with and without OS readahead, which seed 001 found
// decides a cold scan by an order of magnitude.
func iterVariants(info engine.Info) []variant {
	if info.Name == "lmdb" {
		return []variant{
			{"/readahead=on", func(o *engine.Options) { o.LmdbReadahead = true }},
			{"/readahead=off", func(o *engine.Options) { o.LmdbReadahead = false }},
		}
	}
	return []variant{asFlagged}
}

func benchIterate(b *testing.B, title string) {
	h := newFixtureHandle(b, title)
	defer h.close(b)
	for _, cache := range h.caches() {
		for _, values := range []bool{true, false} {
			for _, v := range iterVariants(h.info) {
				name := fmt.Sprintf("valsz=%d/cache=%s/values=%v%s", *flagValSize, cache, values, v.name)
				b.Run(name, func(b *testing.B) { iterate(b, h, cache, v, values) })
			}
		}
	}
}

// iterate times b.N full scans. In the cold state every scan starts from
// a closed, evicted, reopened fixture; reopening is not timed, and its disk
// reads are not counted in read-B/op.
func iterate(b *testing.B, h *fixtureHandle, cache string, v variant, values bool) {
	db := h.open(b, cache, v)
	chk := cfg.gen.NewChecker(cfg.fullCheck)
	perScan := int64(cfg.keys) * dataset.KeySize
	if values {
		perScan += int64(cfg.keys) * int64(*flagValSize)
	}
	b.SetBytes(perScan)
	b.ReportAllocs()
	var diskRead int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cache == cacheCold && i > 0 {
			b.StopTimer()
			db = h.open(b, cache, v)
			b.StartTimer()
		}
		io0, _ := measure.ReadIO()
		n, _, err := scanAll(db, values, chk)
		io1, _ := measure.ReadIO()
		diskRead += io1.Sub(io0).ReadBytes
		if err != nil {
			b.Fatal(err)
		}
		if n != cfg.keys {
			b.Fatalf("scan read %d keys, the fixture has %d", n, cfg.keys)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cfg.keys)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	b.ReportMetric(float64(diskRead)/float64(b.N), "read-B/op")
}

func BenchmarkIterateBadger(b *testing.B)  { benchIterate(b, "Badger") }
func BenchmarkIterateBolt(b *testing.B)    { benchIterate(b, "Bolt") }
func BenchmarkIterateLmdb(b *testing.B)    { benchIterate(b, "Lmdb") }
func BenchmarkIterateRocksDB(b *testing.B) { benchIterate(b, "RocksDB") }
func BenchmarkIteratePebble(b *testing.B)  { benchIterate(b, "Pebble") }
func BenchmarkIterateMemory(b *testing.B)  { benchIterate(b, "Memory") }

// Range scans, db_bench's seekrandom and YCSB workload E: one op seeks to a
// random existing key and reads the next -scan_len entries.

func benchScan(b *testing.B, title string) {
	h := newFixtureHandle(b, title)
	defer h.close(b)
	for _, cache := range h.caches() {
		for _, threads := range flagThreads {
			name := fmt.Sprintf("valsz=%d/cache=%s/scan_len=%d/threads=%d", *flagValSize, cache, *flagScanLen, threads)
			b.Run(name, func(b *testing.B) { scan(b, h.open(b, cache, asFlagged), threads) })
		}
	}
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
func scan(b *testing.B, db engine.DB, threads int) {
	g := cfg.gen
	scanLen := *flagScanLen
	results := make([]scanResult, threads)
	readers, lats := newReaders(b, db, threads)
	io0, _ := measure.ReadIO()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	runThreads(threads, b.N, func(t, n int) {
		res := &results[t]
		rd, lat := readers[t], lats[t]
		rng := dataset.NewRand(*flagSeed, uint64(t)+2000)
		chk := g.NewChecker(cfg.fullCheck)
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

// scanFrom reads up to n entries from seek, which must exist.
func scanFrom(rd engine.Reader, seek []byte, n int, chk *dataset.Checker) (entries, bytes int64, err error) {
	it, err := rd.NewIter(engine.IterOptions{Start: seek})
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	for ; it.Valid() && entries < int64(n); it.Next() {
		k := it.Key()
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

func BenchmarkScanBadger(b *testing.B)  { benchScan(b, "Badger") }
func BenchmarkScanBolt(b *testing.B)    { benchScan(b, "Bolt") }
func BenchmarkScanLmdb(b *testing.B)    { benchScan(b, "Lmdb") }
func BenchmarkScanRocksDB(b *testing.B) { benchScan(b, "RocksDB") }
func BenchmarkScanPebble(b *testing.B)  { benchScan(b, "Pebble") }
func BenchmarkScanMemory(b *testing.B)  { benchScan(b, "Memory") }
