package workload

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/load"
)

// Bloom: seed 003's Bloom filter experiment. Point reads over an LSM whose
// data sits in -sst_tables unmerged tables, each holding keys from all
// over the key space, so without filters a lookup may search every table
// (docs/benchmarks.md; cold: docs/methodology.md, "What a cold round is").
func init() {
	core.Register(&core.Workload{
		Name:    "Bloom",
		Engines: func(i engine.Info) bool { return i.TableFilters },
		Fixtures: func(e *core.Env, info engine.Info) []*core.Fixture {
			var out []*core.Fixture
			for _, fpr := range bloomFPRFlag.Get(&e.Cfg) {
				out = append(out, tablesFixture(e, info, fpr))
			}
			return out
		},
		Units:   append([]core.Unit{core.Lower("open-ms"), core.Lower("open-read-B")}, loadUnits...),
		Options: loadFlags,
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			c := loadOf(&e.Cfg)
			rates := append(append([]int{}, c.Rates...), 0) // 0: closed loop
			for _, fpr := range c.BloomFPR {
				h := e.Open(b, tablesFixture(e, info, fpr))
				for _, cache := range h.Caches() {
					for _, hit := range bloomHitRates {
						prefix := fmt.Sprintf("tables=%d/bloom=%s/cache=%s/hit=%s%%", c.SSTTables, fprName(fpr), cache, core.TrimFloat(hit*100))
						for _, rate := range rates {
							name := prefix + "/rate=closed"
							if rate > 0 {
								name = prefix + "/rate=" + strconv.Itoa(rate)
							}
							h.Run(b, name, cache, nil, func(b *testing.B, db engine.DB) {
								runBloom(b, e, h, db, cache, hit, rate)
							})
						}
					}
				}
				h.Close(b)
			}
		},
	})
}

// bloomHitRates are the miss-heavy and hit-heavy read mixes.
var bloomHitRates = []float64{0.1, 0.9}

// tablesFixture is the engine's many-table fixture (buildTables), compactions off, filters at fpr (0: none).
func tablesFixture(e *core.Env, info engine.Info, fpr float64) *core.Fixture {
	n := sstTablesFlag.Get(&e.Cfg)
	f := e.NewFixture(info, fmt.Sprintf("sst%d-bloom%s", n, fprName(fpr)), core.GenSource{G: e.Gen}, func(o *engine.Options) {
		o.DisableCompactions = true
		o.BloomBitsPerKey = 0
		o.BloomFPR = fpr
	})
	delete(f.Params.Layout, "b") // -bloom_bits does not apply
	f.Build = buildTables
	return f
}

// buildTables writes f's data set in -sst_tables groups of disjoint random
// keys, each flushed to a table of its own; an engine whose Flush leaves
// it in its memtable (Badger's, until full or Close) is reopened.
func buildTables(e *core.Env, db engine.DB, f *core.Fixture) error {
	n := uint64(sstTablesFlag.Get(&e.Cfg))
	tables := func() int {
		m, _ := filepath.Glob(filepath.Join(f.Options.Dir, "*.sst"))
		return len(m)
	}
	for t := uint64(0); t < n; t++ {
		before := tables()
		part := rangeSource{f.Data, f.Data.Len() * t / n, f.Data.Len() * (t + 1) / n}
		if err := e.WriteAll(db, part, e.Cfg.Batch, 1, fmt.Sprintf("%s table %d", f.Params.Name(), t+1)); err != nil {
			return err
		}
		if err := db.Flush(); err != nil {
			return err
		}
		if tables() == before {
			if err := core.Reopen(db); err != nil {
				return err
			}
		}
	}
	if got := tables(); uint64(got) < n {
		return fmt.Errorf("%d tables on disk after %d flushes: compactions merged them", got, n)
	}
	return nil
}

// rangeSource is entries lo..hi-1 of a Source.
type rangeSource struct {
	core.Source
	lo, hi uint64
}

func (s rangeSource) Len() uint64 { return s.hi - s.lo }
func (s rangeSource) LogicalBytes() int64 {
	return int64(float64(s.Source.LogicalBytes()) * float64(s.hi-s.lo) / float64(s.Source.Len()))
}
func (s rangeSource) Entry(i uint64, kb, vb []byte) ([]byte, []byte) {
	return s.Source.Entry(s.lo+i, kb, vb)
}

// bloomWarmGets is how many gets each worker makes, untimed, before a
// warm leaf's first window (docs/methodology.md, "The read benchmarks").
const bloomWarmGets = 100

// runBloom runs gets at rate (0: closed loop) for b.N windows, warm on
// db, cold each on the fixture reopened after eviction.
func runBloom(b *testing.B, e *core.Env, h *core.Handle, db engine.DB, cache string, hit float64, rate int) {
	c := loadOf(&e.Cfg)
	ws := newLoadWorkers(e, db, e.CallStreams(b), c.LoadWorkers, 6000, nil)
	defer closeLoadWorkers(ws)
	op := func(w int, _ uint64) error { return ws[w].getMix(hit) }
	window := func() (*load.Result, error) {
		if rate == 0 {
			return load.Closed(load.Config{Duration: c.LoadTime, Workers: c.LoadWorkers}, op)
		}
		return load.Run(c.at(rate), op)
	}
	var res *load.Result
	if cache == core.Cold {
		h.ColdRounds(b, nil, func(db engine.DB) (func(), func()) {
			for _, w := range ws { // a fresh reader each: a round's first gets open none
				rd, err := db.NewReader()
				fatalIf(b, err)
				w.db, w.rd, w.reads = db, rd, 0
			}
			return func() {
				r, err := window()
				fatalIf(b, err)
				res = merge(res, r)
			}, func() { closeLoadWorkers(ws) }
		})
	} else {
		for _, w := range ws {
			for range bloomWarmGets {
				fatalIf(b, w.getMix(hit))
			}
		}
		b.ResetTimer()
		res = windows(b, window)
		b.StopTimer()
	}
	reportLoad(e, b, res)
}
