package core

import (
	"io"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
)

// slowingDB's batches commit at once until 90 have been committed, then
// take 50 ms each: a store slowing down as its data outgrows memory.
type slowingDB struct {
	engine.DB
	commits int
}

type slowingBatch struct {
	engine.Batch
	db *slowingDB
}

func (d *slowingDB) NewBatch() engine.Batch { return &slowingBatch{d.DB.NewBatch(), d} }

func (b *slowingBatch) Commit() error {
	b.db.commits++
	if b.db.commits > 90 {
		time.Sleep(50 * time.Millisecond)
	}
	return b.Batch.Commit()
}

// TestWriteTimesShowASlowdown: the rate of the last tenth of a write that
// slows down is well below the rate of its first tenth.
func TestWriteTimesShowASlowdown(t *testing.T) {
	c := Default()
	c.KeysMil = 0.01
	c.ValSize = 16
	e, err := NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := engine.Open("memory", engine.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	wt, err := e.WriteAllTimed(&slowingDB{DB: mem}, GenSource{e.Gen}, 100, 1, "test")
	if err != nil {
		t.Fatal(err)
	}
	// 100 batches: the last tenth sleeps 10 × 50 ms, so its rate is at
	// most 2,000 keys/s; the first tenth, 1,000 keys into memory, takes
	// about a millisecond. Only a stall of 250 ms in the first tenth, a
	// machine more than 100 times slower than usual, brings it within 2×:
	// an order-of-magnitude check, not a timing.
	if wt.FirstRate <= 0 || wt.LastRate <= 0 || wt.LastRate*2 > wt.FirstRate {
		t.Fatalf("first tenth %.0f keys/s, last tenth %.0f keys/s", wt.FirstRate, wt.LastRate)
	}
	if n, _, err := ScanAll(mem, true, GenSource{e.Gen}.NewChecker(true)); err != nil || n != e.Keys {
		t.Fatalf("read back %d keys of %d: %v", n, e.Keys, err)
	}
}

func TestShapeNamesTheBudget(t *testing.T) {
	c := Default()
	e, err := NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Shape(); got != "valsz=1024" {
		t.Errorf("no budget: %q", got)
	}
	c.CacheMB, c.MemtableMB = 2, 2
	if err := c.MemLimit.Set("26MiB"); err != nil {
		t.Fatal(err)
	}
	if e, err = NewEnv(c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := e.Shape(); got != "valsz=1024/mem=26MiB" {
		t.Errorf("budget: %q", got)
	}
}
