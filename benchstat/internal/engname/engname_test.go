package engname

import (
	"testing"

	"golang.org/x/perf/benchfmt"
)

func TestEngineName(t *testing.T) {
	for in, want := range map[string]string{
		"ReadRandomBadger/valsz=1024/threads=8-2": "ReadRandom/engine=Badger/valsz=1024/threads=8-2",
		"PopulateRocksDB-2":                       "Populate/engine=RocksDB-2",
		"ReadRandomLmdb":                          "ReadRandom/engine=Lmdb",
	} {
		got, ok := EngineName(benchfmt.Name(in))
		if !ok || string(got) != want {
			t.Errorf("%s -> %s, %v; want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"LmdbBatch/mode=txn-2", "Badger", "Disk/threads=1"} {
		if got, ok := EngineName(benchfmt.Name(in)); ok {
			t.Errorf("%s renamed to %s", in, got)
		}
	}
}

func TestSplit(t *testing.T) {
	op, eng, cfg, ok := Split(benchfmt.Name("ReadRandomRocksDB/valsz=1024/hit=63%/threads=16-2"))
	if !ok || op != "ReadRandom" || eng != "RocksDB" || cfg != "valsz=1024/hit=63%/threads=16" {
		t.Fatalf("got %q %q %q %v", op, eng, cfg, ok)
	}
	if _, _, cfg, ok := Split(benchfmt.Name("PopulateBolt-2")); !ok || cfg != "" {
		t.Fatalf("PopulateBolt-2: %q %v", cfg, ok)
	}
	if _, _, _, ok := Split(benchfmt.Name("LmdbBatch/mode=txn-2")); ok {
		t.Fatal("LmdbBatch split")
	}
}
