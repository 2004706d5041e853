package engine_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

func TestBloomBitsForFPR(t *testing.T) {
	for p, want := range map[float64]float64{0.01: 9.585, 0.03: 7.298, 0.5: 1.443} {
		if got := engine.BloomBitsForFPR(p); math.Abs(got-want) > 0.001 {
			t.Errorf("BloomBitsForFPR(%v) = %.4f, want %.3f", p, got, want)
		}
	}
}

// TestManyTables: with DisableCompactions, each flush of an LSM stays a
// table of its own (Badger flushes its memtable on Close), every key is
// still found, and Settings shows the filter set by false-positive rate.
func TestManyTables(t *testing.T) {
	const tables, perTable = 8, 50
	eachEngine(t, func(i engine.Info) bool { return i.TableFilters }, func(t *testing.T, info engine.Info) {
		o := testOptions(t.TempDir())
		o.DisableCompactions, o.BloomFPR, o.BloomBitsPerKey = true, 0.03, 0
		db := open(t, info.Name, o)
		for tb := 0; tb < tables; tb++ {
			var kv []string
			for i := 0; i < perTable; i++ {
				kv = append(kv, fmt.Sprintf("k%03d-%03d", i, tb), fmt.Sprintf("v%d-%d", tb, i))
			}
			put(t, db, kv...)
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
			if info.Name == "badger" {
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				db = open(t, info.Name, o)
			}
		}
		defer db.Close()
		ssts, _ := filepath.Glob(filepath.Join(o.Dir, "*.sst"))
		if len(ssts) < tables {
			t.Errorf("%d tables on disk after %d flushes: compactions merged them", len(ssts), tables)
		}
		r := reader(t, db)
		defer r.Close()
		for tb := 0; tb < tables; tb++ {
			for i := 0; i < perTable; i += 7 {
				if v, found := mustGet(t, r, fmt.Sprintf("k%03d-%03d", i, tb)); !found || v != fmt.Sprintf("v%d-%d", tb, i) {
					t.Fatalf("table %d key %d: %q, %v", tb, i, v, found)
				}
			}
		}
		if _, found := mustGet(t, r, "missing"); found {
			t.Error("a missing key was found")
		}
		var bloom string
		for _, s := range db.Settings() {
			if strings.Contains(s.Key, "bloom") {
				bloom = s.Value
			}
		}
		if !strings.Contains(bloom, "0.03") && !strings.Contains(bloom, "7 bits") {
			t.Errorf("bloom setting %q does not show the rate", bloom)
		}
	})
}
