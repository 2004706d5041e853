package kvbench

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/load"
)

// Seed 003's Bloom filter experiment: point reads over an LSM whose data
// sits in -sst_tables unmerged tables, each holding keys from all over the
// key space, so without filters a lookup may search every table.

// bloomTitles are the engines with table filters.
var bloomTitles = map[string]bool{"Badger": true, "RocksDB": true, "Pebble": true}

// bloomHitRates are the miss-heavy and hit-heavy read mixes.
var bloomHitRates = []float64{0.1, 0.9}

// sstPlan lists the engines whose many-table fixtures the selected
// benchmarks read.
func sstPlan(re *regexp.Regexp) []engine.Info {
	var out []engine.Info
	for _, info := range engine.All() {
		if bloomTitles[info.Title] && re.MatchString("BenchmarkBloom"+info.Title) {
			out = append(out, info)
		}
	}
	return out
}

// sstOptions opens a many-table fixture: compactions off, filters by
// false-positive rate (0: none).
func sstOptions(info engine.Info, dir string, fpr float64) engine.Options {
	o := engineOptions(info, dir)
	o.DisableCompactions = true
	o.BloomBitsPerKey = 0
	o.BloomFPR = fpr
	return o
}

func sstParams(info engine.Info, fpr float64) dataset.Params {
	p := fixtureParams(info)
	p.Layout = maps.Clone(p.Layout)
	delete(p.Layout, "b") // -bloom_bits does not apply
	p.Layout["sst"] = fmt.Sprint(*flagSSTTables)
	p.Layout["fpr"] = fprName(fpr)
	return p
}

// ensureSSTFixtures builds (or reuses) every many-table fixture the run
// reads, before anything is timed.
func ensureSSTFixtures(infos []engine.Info) error {
	for _, info := range infos {
		for _, fpr := range *flagBloomFPR {
			if _, err := sstFixture(info, fpr); err != nil {
				return err
			}
		}
	}
	return nil
}

// sstFixture returns the directory of the engine's many-table fixture with
// filters at fpr, building it when needed: -sst_tables groups of keys, each
// written and then flushed to a table of its own.
func sstFixture(info engine.Info, fpr float64) (string, error) {
	p := sstParams(info, fpr)
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if d, ok := fixtures[p.Name()]; ok {
		return d, nil
	}
	dir, m, err := cfg.root.Ensure(p, func(dir string) (dataset.Manifest, error) {
		logf("building fixture %s (%d keys x %d B in %d tables)", p.Name(), cfg.keys, *flagValSize, *flagSSTTables)
		return buildSST(info, sstOptions(info, dir, fpr))
	}, logf)
	if err != nil {
		return "", err
	}
	if m.BuildSeconds > 0 {
		logf("fixture %s: %s, %s on disk", p.Name(), m.Settled, human(m.DiskBytes))
	}
	fixtures[p.Name()] = dir
	return dir, nil
}

func buildSST(info engine.Info, o engine.Options) (dataset.Manifest, error) {
	start := time.Now()
	db, err := engine.Open(info.Name, o)
	if err != nil {
		return dataset.Manifest{}, err
	}
	defer func() { db.Close() }()
	g, n := cfg.gen, uint64(*flagSSTTables)
	var kb [dataset.KeySize]byte
	val := make([]byte, g.ValueSize)
	for t := uint64(0); t < n; t++ {
		for lo, hi := g.Keys*t/n, g.Keys*(t+1)/n; lo < hi; {
			b := db.NewBatch()
			end := min(hi, lo+uint64(*flagBatch))
			for i := lo; i < end; i++ {
				if err := b.Set(g.Key(kb[:], i), g.Value(val, i)); err != nil {
					return dataset.Manifest{}, err
				}
			}
			if err := b.Commit(); err != nil {
				return dataset.Manifest{}, err
			}
			lo = end
		}
		if err := db.Flush(); err != nil {
			return dataset.Manifest{}, err
		}
		// Badger writes its memtable out only when it is full or on Close.
		if info.Name == "badger" {
			if err := db.Close(); err != nil {
				return dataset.Manifest{}, err
			}
			if db, err = engine.Open(info.Name, o); err != nil {
				return dataset.Manifest{}, err
			}
		}
	}
	version := db.Version()
	if err := db.Close(); err != nil {
		return dataset.Manifest{}, err
	}
	tables, _ := filepath.Glob(filepath.Join(o.Dir, "*.sst"))
	if uint64(len(tables)) < n {
		return dataset.Manifest{}, fmt.Errorf("%d tables on disk after %d flushes", len(tables), n)
	}
	size, err := engine.DirSize(o.Dir)
	if err != nil {
		return dataset.Manifest{}, err
	}
	return dataset.Manifest{
		EngineVersion: version, KeyCount: cfg.keys, LogicalBytes: cfg.gen.LogicalBytes(), DiskBytes: size,
		BuildSeconds: time.Since(start).Seconds(),
		Settled:      fmt.Sprintf("%d flushes of disjoint random keys with compactions off: %d tables", n, len(tables)),
	}, nil
}

// printSSTConfig echoes every option of one many-table fixture's engine, a
// line per filter setting (printEngineConfig prints one per engine).
func printSSTConfig(db engine.DB, fpr float64) {
	s := make([]string, 0, 24)
	for _, kv := range db.Settings() {
		s = append(s, kv.String())
	}
	fmt.Fprintf(os.Stdout, "settings-%s-tables%d-bloom%s: %s\n", db.Name(), *flagSSTTables, fprName(fpr), strings.Join(s, " "))
}

func (w *loadWorker) getMix(hitRate float64) error { return w.get(w.rng.Float64() < hitRate) }

// benchBloom is the body of BenchmarkBloom<Engine>: for each filter
// setting, miss-heavy and hit-heavy gets at each -rate (open loop) and
// back to back (rate=closed), every read verified.
func benchBloom(b *testing.B, title string) {
	info := lookupTitle(b, title)
	for _, fpr := range *flagBloomFPR {
		dir, err := sstFixture(info, fpr)
		if err != nil {
			b.Fatal(err)
		}
		o := sstOptions(info, dir, fpr)
		o.ReadOnly = true
		db, err := engine.Open(info.Name, o)
		if err != nil {
			b.Fatal(err)
		}
		printSSTConfig(db, fpr)
		for _, hit := range bloomHitRates {
			prefix := fmt.Sprintf("tables=%d/bloom=%s/hit=%s%%", *flagSSTTables, fprName(fpr), trimFloat(hit*100))
			for _, rate := range *flagRate {
				b.Run(fmt.Sprintf("%s/rate=%d", prefix, rate), func(b *testing.B) { runBloom(b, db, hit, rate) })
			}
			b.Run(prefix+"/rate=closed", func(b *testing.B) { runBloom(b, db, hit, 0) })
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// runBloom runs gets at rate (0: closed loop) for b.N windows.
func runBloom(b *testing.B, db engine.DB, hit float64, rate int) {
	ws := newLoadWorkers(db, *flagLoadWorkers, 6000)
	defer closeLoadWorkers(ws)
	op := func(w int, _ uint64) error { return ws[w].getMix(hit) }
	b.ResetTimer()
	res := windows(b, func(int) (*load.Result, error) {
		if rate == 0 {
			return load.Closed(load.Config{Duration: *flagLoadTime, Workers: *flagLoadWorkers}, op)
		}
		return load.Run(loadConfig(rate), op)
	})
	b.StopTimer()
	reportLoad(b, res)
}

func BenchmarkBloomBadger(b *testing.B)  { benchBloom(b, "Badger") }
func BenchmarkBloomRocksDB(b *testing.B) { benchBloom(b, "RocksDB") }
func BenchmarkBloomPebble(b *testing.B)  { benchBloom(b, "Pebble") }
