package core

import (
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// Probe is the workload of the core's own tests: the core cannot import
// the real ones (internal/workload imports it), so its tests plan, build
// and read fixtures through this one. One op is one verified Get of the
// shared fixture, in each -cache state, through a Handle.
func init() {
	Register(&Workload{
		Name:    "Probe",
		Engines: Everything,
		Fixtures: func(e *Env, info engine.Info) []*Fixture {
			if info.Reference {
				return nil
			}
			return []*Fixture{e.KVFor(info)}
		},
		Units: []Unit{Higher("ops/s")},
		Run: func(b *testing.B, e *Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, cache := range h.Caches() {
				h.Run(b, e.LeafName("cache", cache), cache, nil, func(b *testing.B, db engine.DB) { probe(b, e, db) })
			}
		},
	})
}

// probe reads b.N keys of the data set in order, each value verified.
func probe(b *testing.B, e *Env, db engine.DB) {
	rd, err := db.NewReader()
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	chk := e.Gen.NewChecker(true)
	kb := make([]byte, dataset.KeySize)
	for n := 0; n < b.N; n++ {
		i := uint64(n) % e.Keys
		if found, err := rd.Get(e.Gen.Key(kb, i), func(v []byte) error { return chk.Check(i, v) }); err != nil || !found {
			b.Fatalf("key %d: found=%v err=%v", i, found, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
