//go:build rocksdb

package engine

import (
	"strings"
	"testing"
)

// TestRocksDBOpenLeavesBookkeepingToSettings: an open (what BenchmarkOpen
// times) neither probes the library nor reads the OPTIONS file; Settings
// does, reading the file once per database and probing the library once
// per process, and still reports both.
func TestRocksDBOpenLeavesBookkeepingToSettings(t *testing.T) {
	dir := t.TempDir()
	db, err := Open("rocksdb", Options{Dir: dir, CacheMB: 8, MemtableMB: 8})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	if err := b.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Settings() // the library is probed by now, whichever test ran first
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	probes, reads := rocksdbLibProbes.Load(), rocksdbOptionsReads.Load()
	for i := 0; i < 3; i++ {
		db, err := Open("rocksdb", Options{Dir: dir, CacheMB: 8, MemtableMB: 8, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if p, r := rocksdbLibProbes.Load(), rocksdbOptionsReads.Load(); p != probes || r != reads {
			t.Errorf("open %d: %d library probes and %d OPTIONS reads inside Open", i, p-probes, r-reads)
		}
		got := map[string]string{}
		for _, s := range db.Settings() {
			got[s.Key] = s.Value
		}
		db.Settings()
		if r := rocksdbOptionsReads.Load(); r != reads+1 {
			t.Errorf("open %d: %d OPTIONS reads for two Settings calls, want 1", i, r-reads)
		}
		reads = rocksdbOptionsReads.Load()
		if v := got["librocksdb_options_file"]; v == "" || v == "none" || !strings.HasPrefix(got["librocksdb"], v+" ") {
			t.Errorf("open %d: librocksdb_options_file %q, librocksdb %q", i, v, got["librocksdb"])
		}
		if !strings.HasPrefix(got["assertions"], "on") && !strings.HasPrefix(got["assertions"], "off") {
			t.Errorf("open %d: assertions %q", i, got["assertions"])
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if p := rocksdbLibProbes.Load(); p != 1 {
		t.Errorf("the library was probed %d times in this process, want once", p)
	}
}
