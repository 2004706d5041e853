package kvbench

import (
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// BenchmarkOpen<Engine> times what a process pays before its first answer:
// opening the fixture read-only and serving one verified point read. Seed
// 001 saw Badger spend seconds loading tables at open; measured here on its
// own, that cost never leaks into the read benchmarks, which open outside
// the timer.

func benchOpen(b *testing.B, title string) {
	h := newFixtureHandle(b, title)
	defer h.close(b)
	for _, cache := range h.caches() {
		b.Run(fmt.Sprintf("valsz=%d/cache=%s", *flagValSize, cache), func(b *testing.B) { openAndRead(b, h, cache) })
	}
}

func openAndRead(b *testing.B, h *fixtureHandle, cache string) {
	h.close(b) // nothing else may hold the fixture open
	if cache == cacheWarm {
		h.open(b, cacheWarm, asFlagged) // one untimed open and pass loads the page cache
		h.close(b)
	}
	o := engineOptions(h.info, h.dir)
	o.ReadOnly = true
	g := cfg.gen
	chk := g.NewChecker(true)
	rng := dataset.NewRand(*flagSeed, 3000)
	var kb [dataset.KeySize]byte
	var diskRead int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if cache == cacheCold {
			evictFixture(b, h.dir)
		}
		idx := rng.Below(g.Keys)
		key := g.Key(kb[:], idx)
		io0, _ := measure.ReadIO()
		b.StartTimer()

		db, err := engine.Open(h.info.Name, o)
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
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(diskRead)/float64(b.N), "read-B/op")
}

func BenchmarkOpenBadger(b *testing.B)  { benchOpen(b, "Badger") }
func BenchmarkOpenBolt(b *testing.B)    { benchOpen(b, "Bolt") }
func BenchmarkOpenLmdb(b *testing.B)    { benchOpen(b, "Lmdb") }
func BenchmarkOpenRocksDB(b *testing.B) { benchOpen(b, "RocksDB") }
func BenchmarkOpenPebble(b *testing.B)  { benchOpen(b, "Pebble") }
