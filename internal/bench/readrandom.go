package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// ReadRandom: b.N point reads on the engine's fixture, split across
// -threads goroutines, a -hit_rate share of them for keys that exist, in
// every -cache state. Every hit is verified; a miss key that is found, or
// a hit key that is not, fails the benchmark.
func init() {
	Register(&Workload{
		Name:     "ReadRandom",
		Engines:  Everything,
		Fixtures: kvFixture,
		Step:     "read",
		Units: append([]Unit{Info("hit%"), Higher("ops/s"), Lower("read-B/op"), Lower("cpu-ns/op")},
			latencyUnits...),
		Run: func(b *testing.B, e *Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				for _, hit := range e.Cfg.HitRates {
					for _, threads := range e.Cfg.Threads {
						n := name("valsz", e.Cfg.ValSize, "cache", cache, "hit", TrimFloat(hit*100)+"%", "threads", threads)
						h.Run(b, n, cache, nil, func(b *testing.B, db engine.DB) { readRandom(b, e, db, threads, hit) })
					}
				}
			}
		},
	})
}

// kvFixture declares the shared fixture of the run's data set: what every
// workload that reads it returns from Workload.Fixtures.
func kvFixture(e *Env, info engine.Info) []*Fixture {
	if info.Reference {
		return nil // the rail loads the data set into memory
	}
	return []*Fixture{e.KVFor(info)}
}

// KVFor is the engine's fixture of the run's data set, with the run's
// options.
func (e *Env) KVFor(info engine.Info) *Fixture { return e.KV(info, nil) }

// readResult is one reader goroutine's tally; padded so readers never
// share a cache line.
type readResult struct {
	ops, found, bytes int64
	err               error
	_                 [64]byte
}

// LatencySampleMask selects the reads whose latency is recorded: 1 in 32.
// Timing every op would cost more than some reads (a time.Now pair is
// ~150 ns on some VMs).
const LatencySampleMask = 31

func readRandom(b *testing.B, e *Env, db engine.DB, threads int, hitRate float64) {
	g := e.Gen
	results := make([]readResult, threads)
	readers, lats := NewReaders(b, db, threads)
	io0, _ := measure.ReadIO()
	cpu0 := measure.CPUTime()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	RunThreads(threads, b.N, func(t, n int) {
		res := &results[t]
		rd := readers[t]
		lat := lats[t]
		rng := dataset.NewRand(e.Cfg.Seed, uint64(t)+1000)
		chk := g.NewChecker(e.FullCheck)
		var kb [dataset.KeySize]byte
		var idx uint64
		var got int64
		check := func(v []byte) error {
			got += int64(len(v))
			return chk.Check(idx, v) // Get returns it
		}
		for op := 0; op < n; op++ {
			idx = rng.Below(g.Keys)
			hit := rng.Float64() < hitRate
			var key []byte
			if hit {
				key = g.Key(kb[:], idx)
			} else {
				key = g.MissKey(kb[:], idx)
			}
			sampled := op&LatencySampleMask == 0
			var t0 time.Time
			if sampled {
				t0 = time.Now()
			}
			found, err := rd.Get(key, check)
			if sampled {
				lat.Record(time.Since(t0))
			}
			if err != nil {
				res.err = err
				return
			}
			if found != hit {
				res.err = fmt.Errorf("key %d (hit=%v): found=%v", idx, hit, found)
				return
			}
			if found {
				res.found++
			}
		}
		res.ops = int64(n)
		res.bytes = got
	})
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := measure.CPUTime() - cpu0
	io1, _ := measure.ReadIO()
	var ops, found, bytes int64
	for i := range results {
		if results[i].err != nil {
			b.Fatalf("reader %d: %v", i, results[i].err)
		}
		ops += results[i].ops
		found += results[i].found
		bytes += results[i].bytes
	}
	if ops != int64(b.N) {
		b.Fatalf("%d ops done, want %d", ops, b.N)
	}
	b.ReportMetric(100*float64(found)/float64(ops), "hit%")
	b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(bytes)/1e6/elapsed.Seconds(), "MB/s")
	b.ReportMetric(float64(io1.Sub(io0).ReadBytes)/float64(ops), "read-B/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(ops), "cpu-ns/op") // robust to other processes' load
	measure.Merge(lats...).Report(b.ReportMetric)                        // p50-ns, p99-ns, p999-ns of the sampled reads
}
