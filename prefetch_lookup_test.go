package kvbench

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// TestTraceLookupCountsAndVerifies runs the lookup of BenchmarkPrefetch*
// on every engine: a hit reads all 90 spans, a miss none, bounded or not,
// with prefetch on and off; an unbounded miss really lands on the next
// trace; and a wrong value under a prefix fails the lookup.
func TestTraceLookupCountsAndVerifies(t *testing.T) {
	tr, err := dataset.NewTraces(4, 300, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range engine.All() {
		t.Run(info.Name, func(t *testing.T) {
			o := engine.Options{
				Dir: t.TempDir(), CacheMB: 8, MemtableMB: 4, Compression: "none", BloomBitsPerKey: 10,
				ExpectedBytes: tr.LogicalBytes(), LmdbReadahead: true, LmdbWriteMode: "update",
				BoltFreelist: "map", BoltWriteMode: "update", BadgerValueThreshold: 64,
			}
			db, err := engine.Open(info.Name, o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var done atomic.Int64
			if err := writeTraces(db, tr, 50, &done); err != nil {
				t.Fatal(err)
			}
			// Span 7 of trace 2 holds span 8's value.
			var kb [dataset.TraceKeySize]byte
			bad := db.NewBatch()
			bad.Set(tr.Key(kb[:], 2, 7), tr.Gen.Value(nil, tr.Index(2, 8)))
			if err := bad.Commit(); err != nil {
				t.Fatal(err)
			}
			rd, err := db.NewReader()
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()

			for _, bound := range []bool{false, true} {
				for _, noPrefetch := range []bool{false, true} {
					for _, hit := range []bool{true, false} {
						l := &traceLookup{t: tr, rd: rd, bound: bound, hit: hit, chk: tr.Gen.NewChecker(true)}
						l.o.NoPrefetch = noPrefetch
						for _, i := range []int{0, 1, 3} {
							if err := l.lookup(i); err != nil {
								t.Fatalf("bound=%v noPrefetch=%v hit=%v trace %d: %v", bound, noPrefetch, hit, i, err)
							}
						}
						if want := map[bool]int64{true: 3 * dataset.SpansPerTrace, false: 0}[hit]; l.values != want {
							t.Fatalf("bound=%v hit=%v: %d values, want %d", bound, hit, l.values, want)
						}
						if hit {
							if err := l.lookup(2); err == nil || !strings.Contains(err.Error(), "does not match") {
								t.Fatalf("bound=%v noPrefetch=%v: a wrong value passed: %v", bound, noPrefetch, err)
							}
						}
					}
				}
			}

			var pb [dataset.TracePrefixSize]byte
			it, err := rd.NewIter(engine.IterOptions{Start: tr.Prefix(pb[:], 1, false)})
			if err != nil {
				t.Fatal(err)
			}
			if !it.Valid() || string(it.Key()) != string(tr.Key(kb[:], 2, 0)) {
				t.Fatalf("an unbounded seek to a miss prefix did not land on the next trace")
			}
			it.Close()
		})
	}
}

func TestPrefetchPlan(t *testing.T) {
	p := newRunPlan("BenchmarkPrefetchBadger")
	if len(p.traces) != 1 || p.traces[0].Name != "badger" || len(p.fixtures)+len(p.populate) != 0 || !p.touchesDisk() {
		t.Fatalf("plan for PrefetchBadger: %+v", p)
	}
	if p := newRunPlan("BenchmarkPrefetch/hit=false"); len(p.traces) < 4 {
		t.Fatalf("plan for every engine's prefetch: %+v", p)
	}
	if p := newRunPlan("BenchmarkReadRandomBadger"); len(p.traces) != 0 {
		t.Fatalf("random reads plan a trace fixture: %+v", p)
	}
}
