package engine

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kvbench/kvbench/internal/dataset"
)

// BenchmarkBadgerMetrics reads a small Badger store opened read-only
// with its process-wide metrics on and off, one reader and one per CPU
// (RunParallel), so that whether the adapter's read-only opens turn them
// off rests on a measurement:
//
//	go test ./internal/engine -run '^$' -bench BadgerMetrics -count 6 | benchstat -col /metrics -
func BenchmarkBadgerMetrics(b *testing.B) {
	const keys = 50_000
	g, err := dataset.New(dataset.Spec{Keys: keys, ValueSize: 128, ValueRatio: 1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Dir: b.TempDir(), CacheMB: 64, MemtableMB: 8, BloomBitsPerKey: 10, BlockSize: 32 << 10}
	db, err := Open("badger", o)
	if err != nil {
		b.Fatal(err)
	}
	kb, vb := make([]byte, dataset.KeySize), make([]byte, g.ValueSize)
	for lo := uint64(0); lo < keys; lo += 1000 {
		batch := db.NewBatch()
		for i := lo; i < lo+1000; i++ {
			if err := batch.Set(g.Key(kb, i), g.Value(vb, i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil { // writes the memtable to a table
		b.Fatal(err)
	}
	o.ReadOnly = true
	for _, metrics := range []bool{true, false} {
		bo, _, err := badgerOptions(o)
		if err != nil {
			b.Fatal(err)
		}
		bo.MetricsEnabled = metrics
		bdb, err := badger.Open(bo)
		if err != nil {
			b.Fatal(err)
		}
		get := func(txn *badger.Txn, kb []byte, i uint64) error {
			item, err := txn.Get(g.Key(kb, i%keys))
			if err != nil {
				return err
			}
			if item.ValueSize() != int64(g.ValueSize) {
				return fmt.Errorf("key %d: value of %d bytes", i%keys, item.ValueSize())
			}
			return nil
		}
		warm := bdb.NewTransaction(false)
		for i := uint64(0); i < keys; i++ {
			if err := get(warm, kb, i); err != nil {
				b.Fatal(err)
			}
		}
		warm.Discard()
		name := fmt.Sprintf("metrics=%v", metrics)
		b.Run(name+"/threads=1", func(b *testing.B) {
			txn := bdb.NewTransaction(false)
			defer txn.Discard()
			kb := make([]byte, dataset.KeySize)
			defer reportCPU(b)()
			for i := uint64(0); b.Loop(); i++ {
				if err := get(txn, kb, i*7919); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/threads=parallel", func(b *testing.B) {
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				txn := bdb.NewTransaction(false)
				defer txn.Discard()
				kb := make([]byte, dataset.KeySize)
				for i := uint64(0); pb.Next(); i++ {
					if err := get(txn, kb, i*7919); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		if err := bdb.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// reportCPU reports the process's CPU time per op from now until the
// returned func runs: on a shared machine it varies less than wall time.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
