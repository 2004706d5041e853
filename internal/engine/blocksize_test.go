package engine

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvbench/kvbench/internal/dataset"
)

// blockTestKeys is enough data (about 3 MB) for dozens of 64 KiB blocks.
const blockTestKeys = 20_000

// blockStore writes blockTestKeys keys into a new store of the engine
// with the options as tweak sets them, closes it, and opens it again
// read-only.
func blockStore(t *testing.T, name string, tweak func(*Options)) DB {
	t.Helper()
	g, err := dataset.New(dataset.Spec{Keys: blockTestKeys, ValueSize: 128, ValueRatio: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: t.TempDir(), CacheMB: 8, MemtableMB: 8, BloomBitsPerKey: 10, ExpectedBytes: g.LogicalBytes()}
	tweak(&o)
	WriteKeysForTest(t, name, o, g)
	o.ReadOnly = true
	db, err := Open(name, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// WriteKeysForTest writes g's keys into a new store of the engine in
// batches of 1000 and closes it, so that everything is in the engine's
// files. For this package's tests, internal and external.
func WriteKeysForTest(t *testing.T, name string, o Options, g *dataset.Gen) {
	t.Helper()
	db, err := Open(name, o)
	if err != nil {
		t.Fatal(err)
	}
	kb, vb := make([]byte, dataset.KeySize), make([]byte, g.ValueSize)
	for lo := uint64(0); lo < g.Keys; lo += 1000 {
		b := db.NewBatch()
		for i := lo; i < min(lo+1000, g.Keys); i++ {
			if err := b.Set(g.Key(kb, i), g.Value(vb, i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPebbleBlockSizes: Options.BlockSize is the size of the data blocks
// Pebble writes (its own table properties: data bytes per data block),
// and with the default -pebble_index_block (256KiB) every table has a
// one-level index, while index blocks of 1KiB split it into a two-level
// one, the shape that cost Pebble's reads 15% against its own tool.
func TestPebbleBlockSizes(t *testing.T) {
	for _, c := range []struct {
		block      int
		indexBlock string
		twoLevel   bool
	}{{8 << 10, "256KiB", false}, {64 << 10, "256KiB", false}, {8 << 10, "1KiB", true}} {
		db := blockStore(t, "pebble", func(o *Options) {
			o.BlockSize = c.block
			*o = o.WithParam("pebble_index_block", c.indexBlock)
		})
		levels, err := db.(*pebbleDB).db.SSTables(pebble.WithProperties())
		if err != nil {
			t.Fatal(err)
		}
		var dataBytes, blocks, partitions, tables uint64
		for _, l := range levels {
			for _, tbl := range l {
				p := tbl.Properties
				dataBytes += p.DataSize
				blocks += p.NumDataBlocks
				partitions += p.IndexPartitions
				tables++
			}
		}
		if tables == 0 || blocks == 0 {
			t.Fatalf("block %d: %d tables, %d data blocks", c.block, tables, blocks)
		}
		// Pebble cuts a block once it reaches 90% of the target, before
		// compression (none here); the mean lies near the target.
		if mean := float64(dataBytes) / float64(blocks); mean < 0.75*float64(c.block) || mean > 1.1*float64(c.block) {
			t.Errorf("block %d: mean data block %.0f bytes over %d blocks", c.block, mean, blocks)
		}
		if twoLevel := partitions > 0; twoLevel != c.twoLevel {
			t.Errorf("block %d, index block %s: %d index partitions in %d tables, want two-level %v", c.block, c.indexBlock, partitions, tables, c.twoLevel)
		}
	}
}

// TestBadgerBlockSize: Options.BlockSize is the size of the blocks Badger
// writes. Badger's table index holds one entry per block, so 8× larger
// blocks leave about an eighth of the entries (the table index without
// its Bloom filter, from Badger's own table info).
func TestBadgerBlockSize(t *testing.T) {
	entries := map[int]int{}
	for _, bs := range []int{8 << 10, 64 << 10} {
		db := blockStore(t, "badger", func(o *Options) { o.BlockSize = bs })
		for _, ti := range db.(*badgerDB).db.Tables() {
			entries[bs] += ti.IndexSz - ti.BloomFilterSize
		}
		if entries[bs] == 0 {
			t.Fatalf("block %d: no table index", bs)
		}
	}
	if r := float64(entries[8<<10]) / float64(entries[64<<10]); r < 5 || r > 9 {
		t.Errorf("table index bytes at 8KiB blocks / at 64KiB blocks = %.2f (%v), want about 8", r, entries)
	}
}
