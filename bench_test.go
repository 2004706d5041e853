// Package kvbench compares embedded key-value stores with go test -bench:
// the same seeded data, the same machine and the same settings for every
// engine. See README.md.
package kvbench

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// TestMain validates every flag, prints the run's configuration, and builds
// (or reuses) the fixtures that the selected benchmarks read, before any
// benchmark runs.
func TestMain(m *testing.M) {
	if isColdChild() { // a cold-start child: one read, nothing else
		os.Exit(m.Run())
	}
	flag.Parse()
	plan := newRunPlan(benchPattern())
	if err := parseConfig(plan); err != nil {
		fmt.Fprintf(os.Stderr, "[kvbench] error: %v\n", err)
		os.Exit(2)
	}
	if plan.pattern != "" {
		printConfig(os.Stdout, engine.All())
	}
	if plan.touchesDisk() {
		cleanStaleScratch()
	}
	for _, info := range plan.fixtures {
		if _, err := fixtureFor(info); err != nil {
			fmt.Fprintf(os.Stderr, "[kvbench] error: %v\n", err)
			os.Exit(1)
		}
	}
	for _, info := range plan.traces {
		if _, err := traceFixtureFor(info); err != nil {
			fmt.Fprintf(os.Stderr, "[kvbench] error: %v\n", err)
			os.Exit(1)
		}
	}
	if err := plan.embed.ensure(); err != nil {
		fmt.Fprintf(os.Stderr, "[kvbench] error: %v\n", err)
		os.Exit(1)
	}
	if err := ensureSSTFixtures(plan.sst); err != nil {
		fmt.Fprintf(os.Stderr, "[kvbench] error: %v\n", err)
		os.Exit(1)
	}
	benchmarksRunning.Store(true)
	os.Exit(m.Run())
}

func benchPattern() string {
	if f := flag.Lookup("test.bench"); f != nil {
		return f.Value.String()
	}
	return ""
}

// runPlan is what the selected benchmarks need from the disk.
type runPlan struct {
	pattern  string
	fixtures []engine.Info // engines whose shared fixture is read
	populate []engine.Info // engines written from scratch
	scratch  bool          // a benchmark writes scratch files of its own
	traces   []engine.Info // engines whose trace fixture (seed 000) is read
	embed    embedPlan     // the embedded cdb's records on disk
	sst      []engine.Info // engines whose many-table fixtures are read (bloom_test.go)
}

// Benchmarks that read a shared fixture or write scratch databases, by
// engine, as go test names them.
var (
	fixtureBenchmarks  = []string{"BenchmarkReadRandom", "BenchmarkIterate", "BenchmarkScan", "BenchmarkOpen", "BenchmarkLoad", "BenchmarkKnee", "BenchmarkHTTP"}
	populateBenchmarks = []string{"BenchmarkPopulate"}
	scratchBenchmarks  = []string{"BenchmarkDisk"}
	extraPopulate      = map[string]string{"BenchmarkLmdbBatch": "lmdb", "BenchmarkBoltBatch": "bolt"}
)

func newRunPlan(pattern string) *runPlan {
	p := &runPlan{pattern: pattern}
	if pattern == "" {
		return p
	}
	top := topLevel(pattern)
	re, err := regexp.Compile(top)
	if err != nil {
		return p // go test reports the bad pattern itself
	}
	for _, b := range scratchBenchmarks {
		p.scratch = p.scratch || re.MatchString(b)
	}
	p.embed = newEmbedPlan(pattern)
	for _, info := range engine.All() {
		for _, b := range fixtureBenchmarks {
			if !info.Reference && re.MatchString(b+info.Title) {
				p.fixtures = append(p.fixtures, info)
				break
			}
		}
		added := false
		for _, b := range populateBenchmarks {
			if re.MatchString(b+info.Title) && !added {
				p.populate = append(p.populate, info)
				added = true
			}
		}
		if !info.Reference && re.MatchString(prefetchBenchmark+info.Title) {
			p.traces = append(p.traces, info)
		}
		for b, name := range extraPopulate {
			if name == info.Name && re.MatchString(b) && !added {
				p.populate = append(p.populate, info)
				added = true
			}
		}
	}
	p.sst = sstPlan(re)
	return p
}

// topLevel is the part of a -bench pattern that go test matches against
// top-level benchmark names: everything before the first '/' outside
// brackets and parentheses.
func topLevel(pattern string) string {
	depth := 0
	for i, c := range pattern {
		switch c {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case '\\':
			// an escaped '/' is not a separator; skip the next rune
		case '/':
			if depth == 0 && (i == 0 || pattern[i-1] != '\\') {
				return pattern[:i]
			}
		}
	}
	return pattern
}

func (p *runPlan) touchesDisk() bool {
	return len(p.fixtures)+len(p.populate)+len(p.traces)+len(p.sst) > 0 || p.scratch || p.embed.touchesDisk()
}

// diskEstimate is a generous bound on what the run writes under dir:
// fixtures that are not built yet and one scratch database per populated
// engine at a time, each up to three times the logical size.
func (p *runPlan) diskEstimate(dir string, g *dataset.Gen) int64 {
	var n int64
	for _, info := range p.fixtures {
		fp := fixtureParams(info)
		m, err := dataset.ReadManifest(filepath.Join(dir, dataset.OwnedName, "fixtures", fp.Name()))
		if err != nil || !m.Complete(fp) {
			n++
		}
	}
	if len(p.populate) > 0 || p.scratch {
		n++
	}
	n += int64(len(p.sst) * len(*flagBloomFPR)) // many-table fixtures, built or not
	return n*3*g.LogicalBytes() + p.traceDiskEstimate(dir) + p.embed.diskEstimate()
}

// fixtures holds the fixtures this process has made sure of, by engine.
var (
	fixturesMu sync.Mutex
	fixtures   = map[string]string{}
)

// fixturePath returns the directory of the engine's fixture for this run's
// dataset, building it when needed.
func fixtureFor(info engine.Info) (string, error) {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if d, ok := fixtures[info.Name]; ok {
		return d, nil
	}
	opts := engineOptions(info, "")
	p := fixtureParams(info)
	dir, m, err := cfg.root.Ensure(p, func(dir string) (dataset.Manifest, error) {
		opts.Dir = dir
		logf("building fixture %s (%d keys x %d B)", p.Name(), cfg.keys, *flagValSize)
		st, err := populateOnce(info, opts, info.Name+" fixture", nil)
		if err != nil {
			return dataset.Manifest{}, err
		}
		return dataset.Manifest{
			EngineVersion: st.version, KeyCount: cfg.keys, LogicalBytes: cfg.gen.LogicalBytes(),
			DiskBytes: st.diskBytes, BuildSeconds: st.elapsed.Seconds(),
			Settled: "Flush returned: data durable, memtables flushed, no compaction running or pending",
		}, nil
	}, logf)
	if err != nil {
		return "", err
	}
	if m.BuildSeconds > 0 {
		logf("fixture %s: %d keys, %s on disk, built %s in %.1fs", p.Name(), m.KeyCount, human(m.DiskBytes), m.Built.Format(time.RFC3339), m.BuildSeconds)
	}
	fixtures[info.Name] = dir
	return dir, nil
}

// fixtureParams is everything that shapes the engine's fixture files.
func fixtureParams(info engine.Info) dataset.Params {
	return dataset.Params{
		Engine: info.Name, Keys: cfg.keys, ValueSize: *flagValSize, Seed: *flagSeed,
		ValueRatio: *flagValueRatio, Compression: engineOptions(info, "").Compression,
		FormatVersion: dataset.FormatVersion, Layout: fixtureLayout(info),
	}
}

// fixtureLayout lists the engine options that change a fixture's files.
func fixtureLayout(info engine.Info) map[string]string {
	switch info.Name {
	case "badger":
		return map[string]string{"b": fmt.Sprint(*flagBloomBits), "m": fmt.Sprint(*flagMemtableMB), "vt": fmt.Sprint(*flagBadgerVT)}
	case "pebble", "rocksdb":
		return map[string]string{"b": fmt.Sprint(*flagBloomBits), "m": fmt.Sprint(*flagMemtableMB)}
	case "bolt":
		return map[string]string{"fl": *flagBoltFree}
	}
	return nil
}

// openReference loads the data set into the in-memory calibration rail,
// which keeps nothing on disk and so has no fixture.
func openReference(b *testing.B, info engine.Info) engine.DB {
	db, err := engine.Open(info.Name, engineOptions(info, os.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	if err := writeAll(db, cfg.gen, *flagBatch, 1, info.Name+" load"); err != nil {
		b.Fatal(err)
	}
	printEngineConfig(os.Stdout, db)
	return db
}

// lookupTitle finds a compiled-in engine by its benchmark-name title, and
// skips the benchmark when it is not compiled in.
func lookupTitle(b *testing.B, title string) engine.Info {
	for _, info := range engine.All() {
		if info.Title == title {
			return info
		}
	}
	b.Skipf("%s is not compiled into this binary (RocksDB needs -tags rocksdb)", title)
	return engine.Info{}
}

// readResult is one reader goroutine's tally; padded so readers never
// share a cache line.
type readResult struct {
	ops, found, bytes int64
	err               error
	_                 [64]byte
}

// readRandom is the body of every BenchmarkReadRandom<Engine>: b.N point
// reads split across threads goroutines, each with its own reader, random
// stream and checker. Every hit is verified; a miss key that is found, or a
// hit key that is not, fails the benchmark.
func readRandom(b *testing.B, db engine.DB, threads int, hitRate float64) {
	g := cfg.gen
	results := make([]readResult, threads)
	readers, lats := newReaders(b, db, threads)
	io0, _ := measure.ReadIO()
	cpu0 := measure.CPUTime()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	runThreads(threads, b.N, func(t, n int) {
		res := &results[t]
		rd := readers[t]
		lat := lats[t]
		rng := dataset.NewRand(*flagSeed, uint64(t)+1000)
		chk := g.NewChecker(cfg.fullCheck)
		var kb [dataset.KeySize]byte
		var idx uint64
		var got int64
		check := func(v []byte) error {
			got += int64(len(v))
			return chk.Check(idx, v) // Get returns it
		}
		for op := 0; op < n; op++ {
			idx = rng.Below(g.Keys)
			hit := rng.Float64() < hitRate
			var key []byte
			if hit {
				key = g.Key(kb[:], idx)
			} else {
				key = g.MissKey(kb[:], idx)
			}
			// Timing every op would cost more than some reads (a
			// time.Now pair is ~150 ns on some VMs): sample 1 in 32.
			sampled := op&latencySampleMask == 0
			var t0 time.Time
			if sampled {
				t0 = time.Now()
			}
			found, err := rd.Get(key, check)
			if sampled {
				lat.Record(time.Since(t0))
			}
			if err != nil {
				res.err = err
				return
			}
			if found != hit {
				res.err = fmt.Errorf("key %d (hit=%v): found=%v", idx, hit, found)
				return
			}
			if found {
				res.found++
			}
		}
		res.ops = int64(n)
		res.bytes = got
	})
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := measure.CPUTime() - cpu0
	io1, _ := measure.ReadIO()
	var ops, found, bytes int64
	for i := range results {
		if results[i].err != nil {
			b.Fatalf("reader %d: %v", i, results[i].err)
		}
		ops += results[i].ops
		found += results[i].found
		bytes += results[i].bytes
	}
	if ops != int64(b.N) {
		b.Fatalf("%d ops done, want %d", ops, b.N)
	}
	b.ReportMetric(100*float64(found)/float64(ops), "hit%")
	b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(bytes)/1e6/elapsed.Seconds(), "MB/s")
	b.ReportMetric(float64(io1.Sub(io0).ReadBytes)/float64(ops), "read-B/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(ops), "cpu-ns/op") // robust to other processes' load
	measure.Merge(lats...).Report(b.ReportMetric)                        // p50-ns, p99-ns, p999-ns of the sampled reads
}

// newReaders opens one reader and one latency recorder per goroutine; the
// readers close when the benchmark ends.
func newReaders(b *testing.B, db engine.DB, threads int) ([]engine.Reader, []*measure.Recorder) {
	readers := make([]engine.Reader, threads)
	lats := make([]*measure.Recorder, threads)
	for t := range readers {
		r, err := db.NewReader()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		readers[t] = r
		lats[t] = measure.NewRecorder()
	}
	return readers, lats
}

// runThreads splits n operations over threads goroutines, fn(t, ops) in
// each, and waits for them all.
func runThreads(threads, n int, fn func(t, ops int)) {
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		ops := n / threads
		if t < n%threads {
			ops++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(t, ops)
		}()
	}
	wg.Wait()
}

// latencySampleMask selects the reads whose latency is recorded: 1 in 32.
const latencySampleMask = 31

func benchReadRandom(b *testing.B, title string) {
	h := newFixtureHandle(b, title)
	defer h.close(b)
	for _, cache := range h.caches() {
		for _, hit := range flagHitRates {
			for _, threads := range flagThreads {
				name := fmt.Sprintf("valsz=%d/cache=%s/hit=%s%%/threads=%d", *flagValSize, cache, trimFloat(hit*100), threads)
				b.Run(name, func(b *testing.B) { readRandom(b, h.open(b, cache, asFlagged), threads, hit) })
			}
		}
	}
}

// timestampCost is what one time.Now/time.Since pair costs here, in ns:
// the reason latencies are sampled rather than taken on every read.
var timestampCost = sync.OnceValue(func() int64 { return measure.TimestampCost().Nanoseconds() })

func trimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

func BenchmarkReadRandomBadger(b *testing.B)  { benchReadRandom(b, "Badger") }
func BenchmarkReadRandomBolt(b *testing.B)    { benchReadRandom(b, "Bolt") }
func BenchmarkReadRandomLmdb(b *testing.B)    { benchReadRandom(b, "Lmdb") }
func BenchmarkReadRandomRocksDB(b *testing.B) { benchReadRandom(b, "RocksDB") }
func BenchmarkReadRandomPebble(b *testing.B)  { benchReadRandom(b, "Pebble") }
func BenchmarkReadRandomMemory(b *testing.B)  { benchReadRandom(b, "Memory") }

// logf reports progress on stderr, never among benchmark lines. go test
// merges stderr into its output, so the prefix is one benchfmt ignores (a
// "kvbench: x" line would read as a configuration line).
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[kvbench] "+format+"\n", args...)
}
