package engine_test

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// rangeKeys are the keys the range tests write: around and on both
// bounds of [rangeStart, rangeEnd), and a prefix of each bound.
var (
	rangeStart, rangeEnd = "k10", "k20"
	rangeKeys            = []string{"k", "k0", "k09", "k099", "k1", "k10", "k100", "k15", "k19", "k199", "k1999", "k2", "k20", "k200", "k21", "l"}
)

// outside is rangeKeys without those in [start, end).
func outside(start, end string) []string {
	var out []string
	for _, k := range rangeKeys {
		if k < start || k >= end {
			out = append(out, k)
		}
	}
	return out
}

// keysOf is every key of db, in order.
func keysOf(t *testing.T, db engine.DB) []string {
	t.Helper()
	r := reader(t, db)
	defer r.Close()
	return scan(t, r, engine.IterOptions{KeysOnly: true})
}

// writeRangeKeys writes every key of rangeKeys, its value the key.
func writeRangeKeys(t *testing.T, db engine.DB) {
	t.Helper()
	var kv []string
	for _, k := range rangeKeys {
		kv = append(kv, k, k)
	}
	put(t, db, kv...)
}

// TestDeleteRangeRemovesExactlyTheRange: a range delete removes every key
// in [start, end) and no other, in the memtable, after Flush, after a
// manual compaction where the engine has one, and after a reopen; the
// engines that declare a range delete or a manual compaction are the ones
// expected to.
func TestDeleteRangeRemovesExactlyTheRange(t *testing.T) {
	ranges := map[string]bool{"pebble": true, "rocksdb": true}
	compacts := map[string]bool{"badger": true, "goleveldb": true, "pebble": true, "rocksdb": true}
	want := outside(rangeStart, rangeEnd)
	eachEngine(t, nil, func(t *testing.T, info engine.Info) {
		o := testOptions(t.TempDir())
		db := open(t, info.Name, o)
		defer func() { db.Close() }()
		rd, isRange := db.(engine.RangeDeleter)
		c, isCompacter := db.(engine.Compacter)
		if isRange != ranges[info.Name] || isCompacter != compacts[info.Name] {
			t.Fatalf("RangeDeleter %v, Compacter %v; want %v, %v", isRange, isCompacter, ranges[info.Name], compacts[info.Name])
		}
		if !isRange {
			return
		}
		writeRangeKeys(t, db)
		if err := db.Flush(); err != nil { // the keys in a table, the tombstone above them
			t.Fatal(err)
		}
		if err := rd.DeleteRange([]byte(rangeStart), []byte(rangeEnd)); err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			if got := keysOf(t, db); !slices.Equal(got, want) {
				t.Errorf("%s: keys %v, want %v", when, got, want)
			}
			r := reader(t, db)
			defer r.Close()
			for _, k := range rangeKeys {
				_, found := mustGet(t, r, k)
				if in := k >= rangeStart && k < rangeEnd; found == in {
					t.Errorf("%s: Get(%q) found=%v", when, k, found)
				}
			}
			// A seek into the range lands on the first key after it.
			if got := scan(t, r, engine.IterOptions{Start: []byte("k12"), KeysOnly: true}); len(got) == 0 || got[0] != rangeEnd {
				t.Errorf("%s: seek to k12 found %v, want %s first", when, got, rangeEnd)
			}
		}
		check("deleted")
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		check("flushed")
		if err := c.Compact([]byte(rangeStart), []byte(rangeEnd)); err != nil {
			t.Fatal(err)
		}
		check("compacted")
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = open(t, info.Name, o)
		check("reopened")
	})
}

// TestCompactRangeKeepsEveryKey: a manual compaction of a range that holds
// deleted and live keys keeps every live key and its value.
func TestCompactRangeKeepsEveryKey(t *testing.T) {
	onEachEngine(t, func(t *testing.T, info engine.Info, db engine.DB) {
		c, ok := db.(engine.Compacter)
		if !ok {
			t.Skipf("%s has no manual compaction", info.Name)
		}
		writeRangeKeys(t, db)
		if err := engine.Delete(db, []byte("k15")); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := c.Compact([]byte(rangeStart), []byte(rangeEnd)); err != nil {
			t.Fatal(err)
		}
		r := reader(t, db)
		defer r.Close()
		var want []string
		for _, k := range rangeKeys {
			if k != "k15" {
				want = append(want, k+"="+k)
			}
		}
		if got := scan(t, r, engine.IterOptions{}); !slices.Equal(got, want) {
			t.Errorf("after compaction: %v, want %v", got, want)
		}
	})
}

// TestDeleteBatchRangeOfKeys: every adapter deletes a batch of keys in one
// write, exactly those keys, missing ones included without complaint.
func TestDeleteBatchRangeOfKeys(t *testing.T) {
	onEachEngine(t, func(t *testing.T, info engine.Info, db engine.DB) {
		bd, ok := db.(engine.BatchDeleter)
		if !ok {
			t.Fatalf("%s does not implement engine.BatchDeleter", info.Name)
		}
		writeRangeKeys(t, db)
		var keys [][]byte
		for _, k := range rangeKeys {
			if k >= rangeStart && k < rangeEnd {
				keys = append(keys, []byte(k))
			}
		}
		keys = append(keys, []byte("k17-never-written"))
		if err := bd.DeleteBatch(keys); err != nil {
			t.Fatal(err)
		}
		if got, want := keysOf(t, db), outside(rangeStart, rangeEnd); !slices.Equal(got, want) {
			t.Errorf("keys %v, want %v", got, want)
		}
		if err := bd.DeleteBatch(nil); err != nil {
			t.Errorf("an empty batch: %v", err)
		}
	})
}

// onEachEngine runs fn on every compiled-in engine, each on a new
// database of its own.
func onEachEngine(t *testing.T, fn func(t *testing.T, info engine.Info, db engine.DB)) {
	eachEngine(t, nil, func(t *testing.T, info engine.Info) {
		db := open(t, info.Name, testOptions(t.TempDir()))
		defer db.Close()
		fn(t, info, db)
	})
}
