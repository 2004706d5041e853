package kvbench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// populateStats is what one full write of the data set cost.
type populateStats struct {
	version   string
	elapsed   time.Duration // writes and the final Flush
	diskBytes int64         // on disk after Flush
	io        measure.IO    // from open to close
	settings  []engine.Setting
}

// populateOnce opens a fresh database with opts, writes every key of the
// data set in batches through the engine's native batch path, flushes
// (durable, compactions settled), and closes it. onOpen, when set, sees the
// open database before the clock starts.
func populateOnce(info engine.Info, opts engine.Options, label string, onOpen func(engine.DB)) (populateStats, error) {
	var st populateStats
	io0, err := measure.ReadIO()
	if err != nil {
		return st, err
	}
	db, err := engine.Open(info.Name, opts)
	if err != nil {
		return st, err
	}
	defer db.Close()
	st.version = db.Version()
	st.settings = db.Settings()
	if onOpen != nil {
		onOpen(db)
	}
	start := time.Now()
	if err := writeAll(db, cfg.gen, *flagBatch, *flagWriters, label); err != nil {
		return st, err
	}
	if err := db.Flush(); err != nil {
		return st, fmt.Errorf("flush: %w", err)
	}
	st.elapsed = time.Since(start)
	if st.diskBytes, err = db.Size(); err != nil {
		return st, err
	}
	if err := db.Close(); err != nil {
		return st, fmt.Errorf("close: %w", err)
	}
	io1, err := measure.ReadIO()
	st.io = io1.Sub(io0)
	return st, err
}

// writeAll writes indexes 0..Keys-1 in batches of batchSize. With several
// writers, writer w takes every writers-th batch, so each batch holds keys
// from all over the key space, as a single writer's would.
func writeAll(db engine.DB, g *dataset.Gen, batchSize, writers int, label string) error {
	var done atomic.Int64
	stop := startProgress(label, g.Keys, &done)
	defer stop()
	nBatches := (g.Keys + uint64(batchSize) - 1) / uint64(batchSize)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var kb [dataset.KeySize]byte
			val := make([]byte, g.ValueSize)
			for bi := uint64(w); bi < nBatches; bi += uint64(writers) {
				batch := db.NewBatch()
				lo, hi := bi*uint64(batchSize), min((bi+1)*uint64(batchSize), g.Keys)
				for i := lo; i < hi; i++ {
					if err := batch.Set(g.Key(kb[:], i), g.Value(val, i)); err != nil {
						errs[w] = err
						return
					}
				}
				if err := batch.Commit(); err != nil {
					errs[w] = fmt.Errorf("commit of keys %d..%d: %w", lo, hi, err)
					return
				}
				done.Add(int64(hi - lo))
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if n := done.Load(); n != int64(g.Keys) {
		return fmt.Errorf("wrote %d keys, want %d", n, g.Keys)
	}
	return nil
}

// benchmarksRunning is set once TestMain hands over to the benchmarks.
var benchmarksRunning atomic.Bool

// startProgress reports a long write on stderr: a live line on a terminal,
// otherwise a rate line every few seconds, like badger-bench's populate.
//
// Only before benchmarks start: go test sends stderr into the same stream
// as stdout, and a line written while a benchmark runs would split that
// benchmark's result line, which benchstat then drops.
func startProgress(label string, total uint64, done *atomic.Int64) (stop func()) {
	if benchmarksRunning.Load() {
		return func() {}
	}
	fi, _ := os.Stderr.Stat()
	tty := fi != nil && fi.Mode()&os.ModeCharDevice != 0
	every := 5 * time.Second
	if tty {
		every = 500 * time.Millisecond
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		last, lastAt := int64(0), start
		for {
			select {
			case <-quit:
				if tty {
					fmt.Fprintln(os.Stderr)
				}
				return
			case now := <-t.C:
				n := done.Load()
				rate := float64(n-last) / now.Sub(lastAt).Minutes()
				last, lastAt = n, now
				if tty {
					pct := 100 * float64(n) / float64(total)
					bar := strings.Repeat("=", int(pct/5)) + strings.Repeat(" ", 20-int(pct/5))
					fmt.Fprintf(os.Stderr, "\r%s [%s] %5.1f%% %s of %s keys, %s keys/min   ", label, bar, pct, count(n), count(int64(total)), count(int64(rate)))
				} else {
					fmt.Fprintf(os.Stderr, "%s [%04.0fs] Write key rate per minute: %s. Total: %s of %s\n", label, now.Sub(start).Seconds(), count(int64(rate)), count(n), count(int64(total)))
				}
			}
		}
	}()
	return func() { close(quit); <-finished }
}

func count(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2fK", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// scratchSeq numbers scratch databases within this process.
var scratchSeq atomic.Int64

// scratchDir is a fresh directory for a database that only this benchmark
// writes: <dir>/kvbench/scratch/<engine>-<pid>-<n>.
func scratchDir(name string) string {
	return cfg.root.Sub("scratch", fmt.Sprintf("%s-%d-%d", name, os.Getpid(), scratchSeq.Add(1)))
}

// cleanStaleScratch removes scratch databases left by runs that died
// (their pid is gone). It touches only names it made itself.
func cleanStaleScratch() {
	ents, err := os.ReadDir(cfg.root.Sub("scratch"))
	if err != nil {
		return
	}
	for _, e := range ents {
		parts := strings.Split(e.Name(), "-")
		if len(parts) != 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[1])
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if err := cfg.root.RemoveAll(cfg.root.Sub("scratch", e.Name())); err == nil {
			logf("removed scratch %s left by a run that died", e.Name())
		}
	}
}

// populate is the body of every write benchmark: each op writes the whole
// data set into a fresh database; the database is removed afterwards.
func populate(b *testing.B, title string, tweak func(*engine.Options)) {
	info := lookupTitle(b, title)
	logical := cfg.gen.LogicalBytes()
	b.SetBytes(logical)
	var wrote, onDisk int64
	var elapsed time.Duration
	var peak int64
	b.StopTimer()
	for n := 0; n < b.N; n++ {
		dir := scratchDir(info.Name)
		opts := engineOptions(info, dir)
		if tweak != nil {
			tweak(&opts)
		}
		runtime.GC()
		measure.ResetPeakRSS()
		st, err := populateOnce(info, opts, info.Name+" populate", func(db engine.DB) {
			printEngineConfig(os.Stdout, db)
			b.StartTimer()
		})
		b.StopTimer()
		if err != nil {
			cfg.root.RemoveAll(dir)
			b.Fatal(err)
		}
		if m, err := measure.ReadMem(); err == nil {
			peak = max(peak, m.PeakRSS)
		}
		wrote += st.io.WriteBytes
		onDisk += st.diskBytes
		elapsed += st.elapsed
		if err := cfg.root.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
	}
	ops := float64(b.N)
	b.ReportMetric(float64(cfg.keys)*ops/elapsed.Seconds(), "keys/s")
	b.ReportMetric(float64(wrote)/(float64(logical)*ops), "write-amp")
	b.ReportMetric(float64(onDisk)/(float64(logical)*ops), "space-amp")
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MB")
}

// benchPopulate runs with per-commit durability off and on, so the cost of
// sync is measured for every engine rather than assumed.
func benchPopulate(b *testing.B, title string) {
	for _, sync := range []bool{false, true} {
		name := fmt.Sprintf("valsz=%d/batch=%d/sync=%v", *flagValSize, *flagBatch, sync)
		b.Run(name, func(b *testing.B) {
			populate(b, title, func(o *engine.Options) { o.Sync = sync })
		})
	}
}

func BenchmarkPopulateBadger(b *testing.B)  { benchPopulate(b, "Badger") }
func BenchmarkPopulateBolt(b *testing.B)    { benchPopulate(b, "Bolt") }
func BenchmarkPopulateLmdb(b *testing.B)    { benchPopulate(b, "Lmdb") }
func BenchmarkPopulateRocksDB(b *testing.B) { benchPopulate(b, "RocksDB") }
func BenchmarkPopulatePebble(b *testing.B)  { benchPopulate(b, "Pebble") }

// BenchmarkLmdbBatch reruns seed 001's comparison of LMDB batch commits:
// Env.Update ("SimpleBatched") against a hand-driven write transaction on a
// locked OS thread ("TxnBatched").
func BenchmarkLmdbBatch(b *testing.B) {
	for _, mode := range []string{"update", "txn"} {
		b.Run(fmt.Sprintf("mode=%s/valsz=%d/batch=%d/sync=%v", mode, *flagValSize, *flagBatch, *flagSync), func(b *testing.B) {
			populate(b, "Lmdb", func(o *engine.Options) { o.LmdbWriteMode = mode; o.Sync = *flagSync })
		})
	}
}

// BenchmarkBoltBatch compares bbolt's DB.Update (one transaction per
// batch) with DB.Batch (concurrent callers coalesced into one
// transaction), the switch badger-bench made for bbolt; -writers sets the
// number of concurrent callers.
func BenchmarkBoltBatch(b *testing.B) {
	for _, mode := range []string{"update", "batch"} {
		b.Run(fmt.Sprintf("mode=%s/writers=%d/valsz=%d/batch=%d/sync=%v", mode, *flagWriters, *flagValSize, *flagBatch, *flagSync), func(b *testing.B) {
			populate(b, "Bolt", func(o *engine.Options) { o.BoltWriteMode = mode; o.Sync = *flagSync })
		})
	}
}

// TestKilledFixtureBuildIsRebuilt kills a run while it builds a fixture,
// then checks that the next run rebuilds it from scratch and that only a
// complete fixture (every key present and verified) is ever read.
func TestKilledFixtureBuildIsRebuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fixture in a child process")
	}
	dir := t.TempDir()
	args := []string{"-test.run=^$", "-test.bench=BenchmarkReadRandomBolt", "-test.benchtime=1x",
		"-keys_mil", "0.2", "-valsz", "256", "-batch", "50", "-threads", "1", "-dir", dir}
	child := exec.Command(os.Args[0], args...)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join(dir, "kvbench", "fixtures")
	var fixture string
	deadline := time.Now().Add(60 * time.Second)
	for fixture == "" {
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("no fixture directory appeared within 60s")
		}
		matches, _ := filepath.Glob(filepath.Join(fixtures, "bolt-*", "*"))
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Size() > 1<<20 {
				fixture = filepath.Dir(m)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if _, err := os.Stat(filepath.Join(fixture, dataset.ReadyName)); err == nil {
		t.Fatal("the build finished before it was killed: make the data set larger")
	}

	out, err := exec.Command(os.Args[0], args...).CombinedOutput()
	if err != nil {
		t.Fatalf("rerun after kill: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "incomplete or stale; rebuilding") {
		t.Fatalf("rerun did not notice the half-built fixture:\n%s", out)
	}
	if !strings.Contains(string(out), "BenchmarkReadRandomBolt/") {
		t.Fatalf("rerun ran no benchmark:\n%s", out)
	}
	m, err := dataset.ReadManifest(fixture)
	if err != nil || m.KeyCount != 200_000 || m.Params.Engine != "bolt" {
		t.Fatalf("manifest after rebuild: %+v, %v", m, err)
	}
	// Every key is there, once, with its own value.
	g, _ := dataset.New(dataset.Spec{Keys: 200_000, ValueSize: 256, ValueRatio: 1, Seed: 1})
	db, err := engine.Open("bolt", engine.Options{Dir: fixture, ReadOnly: true, Compression: "none", BoltFreelist: "map", BoltWriteMode: "update"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, _ := db.NewReader()
	defer r.Close()
	it, err := r.NewIter(engine.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	chk, n := g.NewChecker(true), 0
	for ; it.Valid(); it.Next() {
		v, err := it.Value()
		if err == nil {
			err = chk.CheckKV(it.Key(), v)
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 200_000 {
		t.Fatalf("rebuilt fixture has %d keys, want 200000", n)
	}
}

// TestPopulateLeavesOnlyItsOwnDirectory runs populate benchmarks and
// checks that -dir holds nothing new outside kvbench/ and nothing of the
// user's changed, and that scratch databases are gone afterwards.
func TestPopulateLeavesOnlyItsOwnDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	mine := filepath.Join(dir, "users-data")
	os.MkdirAll(filepath.Join(mine, "sub"), 0o755)
	os.WriteFile(filepath.Join(mine, "sub", "db.file"), []byte("precious"), 0o644)
	before := treeState(t, mine)
	out, code := runSelf(t, "-test.bench=BenchmarkPopulate(Bolt|Lmdb)", "-test.benchtime=1x", "-keys_mil", "0.01", "-valsz", "100", "-dir", dir)
	if code != 0 || !strings.Contains(out, "write-amp") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if after := treeState(t, mine); !reflect.DeepEqual(before, after) {
		t.Fatal("populate changed a directory it did not create")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "users-data" && e.Name() != "kvbench" {
			t.Errorf("populate created %s outside its own directory", e.Name())
		}
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "kvbench", "scratch")); len(left) != 0 {
		t.Errorf("scratch databases left behind: %v", left)
	}
}
