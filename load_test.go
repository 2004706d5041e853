package kvbench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/load"
	"github.com/kvbench/kvbench/internal/measure"
)

// Fixed-rate workloads. One b.N iteration is one measured window of
// -load_time: a rate is a property of time, not of an operation count.
// ns/op is reported as 1e9 / achieved-ops/s, the wall time per operation
// at the rate actually achieved.
var loadOps = []string{"get-hit", "get-miss", "upsert", "overwrite", "readwhilewriting"}

// readerRenew is how many gets a worker serves from one engine Reader
// before it takes a fresh one, so that readers see recent writes and no
// read transaction pins old pages (LMDB, bbolt) or versions (Badger) for a
// whole run. It costs an allocation every so many operations.
const readerRenew = 1024

// loadWorker is one load goroutine's state; padded so workers never share
// a cache line.
type loadWorker struct {
	db    engine.DB
	rd    engine.Reader
	reads int
	rng   dataset.Rand
	chk   *dataset.Checker
	kb    [dataset.KeySize]byte
	val   []byte
	idx   uint64
	check func([]byte) error // verifies against idx; bound once
	_     [64]byte
}

func newLoadWorkers(db engine.DB, n int, stream uint64) []*loadWorker {
	ws := make([]*loadWorker, n)
	for i := range ws {
		w := &loadWorker{db: db, rng: dataset.NewRand(*flagSeed, stream+uint64(i)), chk: cfg.gen.NewChecker(cfg.fullCheck), val: make([]byte, cfg.gen.ValueSize)}
		w.check = func(v []byte) error { return w.chk.Check(w.idx, v) }
		ws[i] = w
	}
	return ws
}

func closeLoadWorkers(ws []*loadWorker) {
	for _, w := range ws {
		if w.rd != nil {
			w.rd.Close()
			w.rd = nil
		}
	}
}

// get reads one random key, a hit or a miss, and verifies what it got.
func (w *loadWorker) get(hit bool) error {
	if w.rd == nil || w.reads >= readerRenew {
		if w.rd != nil {
			w.rd.Close()
		}
		rd, err := w.db.NewReader()
		if err != nil {
			return err
		}
		w.rd, w.reads = rd, 0
	}
	w.reads++
	g := cfg.gen
	w.idx = w.rng.Below(g.Keys)
	var key []byte
	if hit {
		key = g.Key(w.kb[:], w.idx)
	} else {
		key = g.MissKey(w.kb[:], w.idx)
	}
	found, err := w.rd.Get(key, w.check)
	if err != nil {
		return err
	}
	if found != hit {
		return fmt.Errorf("key %d (hit=%v): found=%v", w.idx, hit, found)
	}
	return nil
}

// put writes value idx under key idx in a batch of one: what one PUT of
// the seed's service does.
func (w *loadWorker) put(idx uint64) error {
	b := w.db.NewBatch()
	if err := b.Set(cfg.gen.Key(w.kb[:], idx), cfg.gen.Value(w.val, idx)); err != nil {
		return err
	}
	return b.Commit()
}

// overwrite rewrites a random existing key. The value is the one the key
// already has, so concurrent readers can verify every read; the engine
// still writes it in full.
func (w *loadWorker) overwrite() error { return w.put(w.rng.Below(cfg.gen.Keys)) }

// windows runs b.N measured windows and merges them.
func windows(b *testing.B, run func(n int) (*load.Result, error)) *load.Result {
	var total *load.Result
	for n := 0; n < b.N; n++ {
		res, err := run(n)
		if err != nil {
			b.Fatal(err)
		}
		if total == nil {
			total = res
			continue
		}
		total.Scheduled += res.Scheduled
		total.Done += res.Done
		total.Elapsed += res.Elapsed
		total.Latency = measure.Merge(total.Latency, res.Latency)
		total.Service = measure.Merge(total.Service, res.Service)
		total.Lag = measure.Merge(total.Lag, res.Lag)
	}
	return total
}

// reportLoad emits the fixed-rate metrics and, with -latency_dir, writes
// the full percentile spectrum to a file named after the benchmark.
func reportLoad(b *testing.B, res *load.Result) {
	if res.Done == 0 {
		b.Fatalf("no operation completed in %v at %.0f ops/s", res.Elapsed, res.Target)
	}
	b.ReportMetric(1e9/res.Achieved(), "ns/op")
	b.ReportMetric(res.Achieved(), "achieved-ops/s")
	res.Latency.ReportAll(b.ReportMetric)
	if res.Lag.Count() > 0 { // the generator's own lateness; open loop only
		b.ReportMetric(float64(res.Lag.Percentile(99)), "lag-p99-ns")
	}
	writeSpectrum(b, b.Name(), res.Latency)
}

// writeSpectrum writes rec's HdrHistogram percentile spectrum (values in
// ns) to <latency_dir>/<name>.hgrm, with the benchmark name's slashes made
// file-name safe.
func writeSpectrum(b *testing.B, name string, rec *measure.Recorder) {
	if *flagLatencyDir == "" {
		return
	}
	file := filepath.Join(*flagLatencyDir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+".hgrm")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(f, "# %s: latency from intended start, ns\n", name)
	if err := rec.WriteSpectrum(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// openLoadDB opens what a workload runs on: the shared fixture read-only
// and warm for reads, a private copy of it for anything that writes, and a freshly
// loaded map for the calibration rail. close removes the copy.
func openLoadDB(b *testing.B, title string, write bool) (db engine.DB, close func()) {
	b.Helper()
	info := lookupTitle(b, title)
	if info.Reference || !write {
		h := newFixtureHandle(b, title)
		return h.open(b, cacheWarm, asFlagged), func() { h.close(b) }
	}
	src, err := fixtureFor(info)
	if err != nil {
		b.Fatal(err)
	}
	dst := scratchDir(info.Name)
	if err := copyTree(src, dst); err != nil {
		cfg.root.RemoveAll(dst)
		b.Fatalf("copy fixture: %v", err)
	}
	db, err = engine.Open(info.Name, engineOptions(info, dst))
	if err != nil {
		cfg.root.RemoveAll(dst)
		b.Fatal(err)
	}
	printEngineConfig(os.Stdout, db)
	return db, func() {
		if err := db.Close(); err != nil {
			b.Error(err)
		}
		if err := cfg.root.RemoveAll(dst); err != nil {
			b.Error(err)
		}
	}
}

// copyTree copies the regular files and directories under src to dst,
// leaving out the fixture's .ready manifest: the copy is not a fixture.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular() || rel == dataset.ReadyName:
			return nil
		}
		return copyFile(p, to)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil { // copy_file_range on Linux
		out.Close()
		return err
	}
	return out.Close()
}

func loadConfig(rate int) load.Config {
	return load.Config{Rate: float64(rate), Duration: *flagLoadTime, Workers: *flagLoadWorkers}
}

// runLoad is the body of every BenchmarkLoad<Engine>/op=.../rate=N.
func runLoad(b *testing.B, title, op string, rate int) {
	write := op != "get-hit" && op != "get-miss"
	if op == "readwhilewriting" && lookupTitle(b, title).Reference {
		b.Skip("the calibration rail copies its whole map on a write while readers hold it")
	}
	db, closeDB := openLoadDB(b, title, write)
	defer closeDB()
	ws := newLoadWorkers(db, *flagLoadWorkers, 2000)
	defer closeLoadWorkers(ws)
	var (
		res      *load.Result
		upserted uint64 // new keys written so far: indexes Keys..Keys+upserted-1
	)
	b.ResetTimer()
	switch op {
	case "get-hit", "get-miss":
		hit := op == "get-hit"
		res = windows(b, func(int) (*load.Result, error) {
			return load.Run(loadConfig(rate), func(w int, _ uint64) error { return ws[w].get(hit) })
		})
	case "upsert":
		res = windows(b, func(int) (*load.Result, error) {
			base := cfg.gen.Keys + upserted
			r, err := load.Run(loadConfig(rate), func(w int, seq uint64) error { return ws[w].put(base + seq) })
			if r != nil {
				upserted += uint64(r.Done) // seq 0..Done-1 were written
			}
			return r, err
		})
	case "overwrite":
		res = windows(b, func(int) (*load.Result, error) {
			return load.Run(loadConfig(rate), func(w int, _ uint64) error { return ws[w].overwrite() })
		})
	case "readwhilewriting":
		wr := newLoadWorkers(db, 1, 3000)[0]
		var writes *load.Result
		res = windows(b, func(int) (*load.Result, error) {
			done := make(chan error, 1)
			go func() {
				r, err := load.Run(load.Config{Rate: float64(*flagWriteRate), Duration: *flagLoadTime, Workers: 1},
					func(int, uint64) error { return wr.overwrite() })
				if err == nil {
					if writes == nil {
						writes = r
					} else {
						writes.Done += r.Done
						writes.Elapsed += r.Elapsed
						writes.Latency = measure.Merge(writes.Latency, r.Latency)
					}
				}
				done <- err
			}()
			r, err := load.Run(loadConfig(rate), func(w int, _ uint64) error { return ws[w].get(true) })
			if werr := <-done; werr != nil && err == nil {
				err = fmt.Errorf("writer: %w", werr)
			}
			return r, err
		})
		b.ReportMetric(writes.Achieved(), "write-ops/s")
		b.ReportMetric(float64(writes.Latency.Percentile(99)), "write-p99-ns")
	default:
		b.Fatalf("unknown load op %q", op)
	}
	b.StopTimer()
	reportLoad(b, res)
	if op == "upsert" {
		verifyUpserts(b, db, res)
	}
}

// verifyUpserts reads back up to 1000 of the keys the upsert run wrote
// (operations 0..Done-1 of each window), spread evenly over them, and
// checks every value.
func verifyUpserts(b *testing.B, db engine.DB, res *load.Result) {
	n := res.Done
	rd, err := db.NewReader()
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	chk := cfg.gen.NewChecker(true)
	var kb [dataset.KeySize]byte
	step := max(1, n/1000)
	for s := int64(0); s < n; s += step {
		idx := cfg.gen.Keys + uint64(s)
		found, err := rd.Get(cfg.gen.Key(kb[:], idx), func(v []byte) error { return chk.Check(idx, v) })
		if err != nil || !found {
			b.Fatalf("upserted key %d (%d of %d done, %d scheduled): found=%v err=%v", idx, s, res.Done, res.Scheduled, found, err)
		}
	}
}

func benchLoad(b *testing.B, title string) {
	for _, op := range loadOps {
		for _, rate := range *flagRate {
			b.Run(fmt.Sprintf("op=%s/rate=%d", op, rate), func(b *testing.B) { runLoad(b, title, op, rate) })
		}
	}
}

func BenchmarkLoadBadger(b *testing.B)  { benchLoad(b, "Badger") }
func BenchmarkLoadBolt(b *testing.B)    { benchLoad(b, "Bolt") }
func BenchmarkLoadLmdb(b *testing.B)    { benchLoad(b, "Lmdb") }
func BenchmarkLoadRocksDB(b *testing.B) { benchLoad(b, "RocksDB") }
func BenchmarkLoadPebble(b *testing.B)  { benchLoad(b, "Pebble") }
func BenchmarkLoadMemory(b *testing.B)  { benchLoad(b, "Memory") }
