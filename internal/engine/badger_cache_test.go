package engine

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// BenchmarkBadgerBlockCache reports the hit ratio of Badger's own block
// cache (64 MiB, 4 KiB blocks, 100,000 × 1 KiB, random point reads of a
// read-only open) with and without compression: an uncompressed block is
// a slice of the table's memory map, charged the slice's capacity to the
// end of the file (docs/engines.md, "Badger's block cache without
// compression").
func BenchmarkBadgerBlockCache(b *testing.B) {
	for _, c := range []struct {
		name string
		comp options.CompressionType
	}{{"none", options.None}, {"snappy", options.Snappy}} {
		b.Run("compression="+c.name, func(b *testing.B) {
			const keys = 100_000
			opt := badger.DefaultOptions(b.TempDir()).WithLogger(nil).WithCompression(c.comp).
				WithBlockCacheSize(64 << 20).WithBlockSize(4096).WithValueThreshold(1 << 20).WithMemTableSize(64 << 20)
			db, err := badger.Open(opt)
			if err != nil {
				b.Fatal(err)
			}
			key := func(i int) []byte {
				var k [16]byte
				binary.BigEndian.PutUint64(k[:], uint64(i)*2654435761)
				return k[:]
			}
			val := make([]byte, 1024)
			for i := range val {
				val[i] = byte(rand.Uint32())
			}
			wb := db.NewWriteBatch()
			for i := 0; i < keys; i++ {
				if err := wb.Set(key(i), val); err != nil {
					b.Fatal(err)
				}
			}
			if err := wb.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
			if db, err = badger.Open(opt.WithReadOnly(true)); err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			txn := db.NewTransaction(false)
			defer txn.Discard()
			r := rand.New(rand.NewPCG(1, 2))
			ks := make([][]byte, 4096) // keys made before the loop
			for i := range ks {
				ks[i] = key(r.IntN(keys))
			}
			h0, m0 := db.BlockCacheMetrics().Hits(), db.BlockCacheMetrics().Misses()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				it, err := txn.Get(ks[i%len(ks)])
				if err != nil {
					b.Fatal(err)
				}
				if err := it.Value(func(v []byte) error {
					if len(v) != len(val) {
						b.Fatalf("value of %d bytes", len(v))
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			m := db.BlockCacheMetrics()
			if h, ms := m.Hits()-h0, m.Misses()-m0; h+ms > 0 {
				b.ReportMetric(100*float64(h)/float64(h+ms), "hit%")
			}
			b.ReportMetric(float64(m.CostAdded())/float64(max(m.KeysAdded(), 1)), "cost-B/block")
		})
	}
}
