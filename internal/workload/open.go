package workload

import (
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Open times what a process pays before its first answer: opening the
// fixture read-only and serving one verified point read, apart from the
// read benchmarks (docs/methodology.md, "The read benchmarks").
func init() {
	core.Register(&core.Workload{
		Name:     "Open",
		Engines:  core.Stores,
		Fixtures: kvFixture,
		Units:    []core.Unit{core.Lower("read-B/op")},
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				// The handle opens the fixture in the cache state (warm:
				// one untimed open and pass loads the page cache) and
				// prints its settings; the body then closes it and times
				// opens of its own.
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
	b.ReportMetric(float64(diskRead)/float64(b.N), "read-B/op")
}
