package engname

import (
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
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

// TestCut: the configuration is results.Split's (its TestSplit).
func TestCut(t *testing.T) {
	op, eng, ok := Cut("ReadRandomRocksDB")
	if !ok || op != "ReadRandom" || eng != "RocksDB" {
		t.Fatalf("got %q %q %v", op, eng, ok)
	}
	if _, _, ok := Cut("PopulateBolt"); !ok {
		t.Fatal("PopulateBolt not cut")
	}
	for _, in := range []string{"LmdbBatch", "Badger"} {
		if _, _, ok := Cut(in); ok {
			t.Fatalf("%s cut", in)
		}
	}
}

// TestRegisteredEngines: the generated list is the registry's (an
// engine added without go generate fails here), and every engine in the
// registry is found in a benchmark name and listed in Titles once, the
// stores before the reference rails, so no engine's results are ever
// dropped.
func TestRegisteredEngines(t *testing.T) {
	all := engine.All()
	stale := len(registered) != len(all)
	for i := 0; !stale && i < len(all); i++ {
		stale = registered[i].title != all[i].Title || registered[i].reference != all[i].Reference
	}
	if stale {
		t.Fatalf("engines_gen.go lists %v, the registry %v: run go generate . in the repository's root", registered, engine.Names())
	}
	titles := Titles()
	if len(titles) != len(engine.All()) {
		t.Fatalf("Titles() = %v, registry has %v", titles, engine.Names())
	}
	pos := map[string]int{}
	for i, title := range titles {
		if _, dup := pos[title]; dup {
			t.Fatalf("%s listed twice in %v", title, titles)
		}
		pos[title] = i
	}
	lastStore, firstRail := -1, len(titles)
	for _, info := range engine.All() {
		i, ok := pos[info.Title]
		if !ok {
			t.Errorf("%s (%s) missing from Titles() %v", info.Name, info.Title, titles)
			continue
		}
		if info.Reference {
			firstRail = min(firstRail, i)
		} else {
			lastStore = max(lastStore, i)
		}
		in := "ReadRandom" + info.Title + "/valsz=1024/threads=4-2"
		if op, eng, ok := Cut("ReadRandom" + info.Title); !ok || op != "ReadRandom" || eng != info.Title {
			t.Errorf("Cut(ReadRandom%s) = %q %q %v", info.Title, op, eng, ok)
		}
		if got, ok := EngineName(benchfmt.Name(in)); !ok || string(got) != "ReadRandom/engine="+info.Title+"/valsz=1024/threads=4-2" {
			t.Errorf("EngineName(%s) = %s, %v", in, got, ok)
		}
	}
	if lastStore > firstRail {
		t.Errorf("a reference rail comes before a store: %v", titles)
	}
}
