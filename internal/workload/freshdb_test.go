package workload

import (
	"io"
	"os"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// TestFreshLeafGivesEverySearchTheFixture: on every engine compiled in,
// each search of a writing knee leaf starts from exactly the fixture's
// keys, though the search before it wrote a new key, and no copy is left
// in scratch afterwards.
func TestFreshLeafGivesEverySearchTheFixture(t *testing.T) {
	coretest.SetBenchtime(t, "1x")
	cfg := core.Default()
	cfg.Dir, cfg.KeysMil, cfg.ValSize = t.TempDir(), 0.002, 64
	e := setup(t, cfg, "BenchmarkKnee", io.Discard)
	for _, info := range engine.All() {
		if info.Missing != "" {
			continue
		}
		searches := 0
		r := testing.Benchmark(func(b *testing.B) {
			h := e.Open(b, e.KVFor(info))
			leafOnCopies(e, b, h, "op=upsert", false, func(b *testing.B, fresh func(*testing.B) engine.DB) {
				for range 3 {
					db := fresh(b)
					searches++
					n, _, err := core.ScanAll(db, true, core.GenSource{G: e.Gen}.NewChecker(true))
					if err != nil || n != e.Keys {
						b.Fatalf("search %d starts on %d keys (%v), the fixture has %d", searches, n, err, e.Keys)
					}
					var kb [dataset.KeySize]byte
					wb := db.NewBatch()
					if err := wb.Set(e.Gen.Key(kb[:], e.Keys), make([]byte, e.Gen.ValueSize)); err != nil {
						b.Fatal(err)
					}
					if err := wb.Commit(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
		if r.N == 0 || searches != 3 {
			t.Errorf("%s: %d searches of 3 ran", info.Name, searches)
		}
		if ents, _ := os.ReadDir(e.Root.Sub("scratch")); len(ents) > 0 {
			t.Errorf("%s: scratch left behind: %v", info.Name, ents)
		}
	}
}
