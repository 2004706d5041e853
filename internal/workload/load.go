package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/keydist"
	"github.com/kvbench/kvbench/internal/load"
	"github.com/kvbench/kvbench/internal/measure"
)

// Load: fixed-rate workloads, one b.N iteration a measured window of
// -load_time (docs/methodology.md, "Fixed-rate load and the knee").
func init() {
	core.Register(&core.Workload{
		Name:     "Load",
		Engines:  core.Everything,
		Fixtures: kvFixture,
		Scratch:  loadScratch,
		Units:    append([]core.Unit{core.Higher("write-ops/s"), core.Lower("write-p99-ns")}, loadUnits...),
		Options:  append(append([]core.Option(nil), loadFlags...), distOptions...),
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			f := e.KVFor(info)
			h := e.Open(b, f)
			for _, op := range loadOps {
				for _, d := range dists(&e.Cfg, "uniform") {
					p := keyDist(b, e, d)
					for _, rate := range rateFlag.Get(&e.Cfg) {
						n := core.SubName("op", op, "dist", distName(d), "rate", rate)
						if op == "readwhilewriting" && info.Reference {
							b.Run(core.BlockLeaf(n, info, f.Options), func(b *testing.B) {
								b.Skip("the calibration rail copies its whole map on a write while readers hold it")
							})
							continue
						}
						write := op != "get-hit" && op != "get-miss"
						var up upserts // across every time testing runs the sub-benchmark
						loadLeaf(e, b, h, n, write, func(b *testing.B, db engine.DB) { runLoad(b, e, db, op, rate, p, &up) })
					}
				}
			}
		},
	})
}

var loadOps = []string{"get-hit", "get-miss", "upsert", "overwrite", "readwhilewriting"}

// loadUnits are what reportLoad reports.
var loadUnits = append([]core.Unit{core.Higher("achieved-ops/s"), core.Lower("unrun-%"), core.Lower("lag-p99-ns")}, core.LatencyUnits...)

// loadScratch is what a writing leaf of Load, Knee or HTTP puts in
// scratch: a copy of the fixture and the new keys of one window at the
// highest -rate, at three times their logical bytes. The rail writes to memory.
func loadScratch(e *core.Env, info engine.Info) int64 {
	if info.Reference {
		return 0
	}
	top := slices.Max(rateFlag.Get(&e.Cfg)) // checked: not empty
	window := int64(float64(top)*loadTimeFlag.Get(&e.Cfg).Seconds()) * int64(dataset.KeySize+e.Cfg.ValSize)
	return 3 * (e.Gen.LogicalBytes() + window)
}

// runLoad is the body of every BenchmarkLoad<Engine>/op=.../rate=N.
func runLoad(b *testing.B, e *core.Env, db engine.DB, op string, rate int, dist *keydist.Params, up *upserts) {
	c := loadOf(&e.Cfg)
	rs := e.CallStreams(b)
	ws := newLoadWorkers(e, db, rs, c.LoadWorkers, 2000, dist)
	defer closeLoadWorkers(ws)
	lc := c.at(rate)
	lc.Prepare = func(w int) { ws[w].prepare() } // keys drawn ahead, untimed
	var res *load.Result
	b.ResetTimer()
	switch op {
	case "get-hit", "get-miss", "overwrite":
		hit := op == "get-hit"
		do := func(w int, _ uint64) error { return ws[w].get(hit) }
		if op == "overwrite" {
			do = func(w int, _ uint64) error { return ws[w].overwrite() }
		}
		res = windows(b, func() (*load.Result, error) { return load.Run(lc, do) })
	case "upsert":
		res = windows(b, func() (*load.Result, error) {
			return up.run(e, c.at(rate), func(w int, idx uint64) error { return ws[w].put(idx) })
		})
	case "readwhilewriting":
		wr := newLoadWorkers(e, db, rs, 1, 3000, dist)[0]
		var writes *load.Result
		res = windows(b, func() (*load.Result, error) {
			done := make(chan error, 1)
			go func() {
				r, err := load.Run(load.Config{Rate: float64(c.WriteRate), Duration: c.LoadTime, Workers: 1, Prepare: func(int) { wr.prepare() }},
					func(int, uint64) error { return wr.overwrite() })
				if err == nil {
					writes = merge(writes, r)
				}
				done <- err
			}()
			r, err := load.Run(lc, func(w int, _ uint64) error { return ws[w].get(true) })
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
	reportLoad(e, b, res)
	if op == "upsert" {
		up.verify(b, e, db)
	}
}

// at is one fixed-rate window at rate, with load's default drain.
func (c loadSettings) at(rate int) load.Config {
	return load.Config{Rate: float64(rate), Duration: c.LoadTime, Workers: c.LoadWorkers}
}

// loadLeaf runs body as sub-benchmark name on the engine's shared fixture
// (h): read-only and warm when it only reads; when it writes, on one
// fresh database for every call (leafOnCopies).
func loadLeaf(e *core.Env, b *testing.B, h *core.Handle, name string, write bool, body func(b *testing.B, db engine.DB)) {
	if !write {
		h.Run(b, name, core.Warm, nil, body)
		return
	}
	leafOnCopies(e, b, h, name, true, func(b *testing.B, db func(*testing.B) engine.DB) { body(b, db(b)) })
}

// readerRenew is how many gets a worker serves from one engine Reader
// before it takes a fresh one: readers see recent writes, and no read
// transaction pins old pages (LMDB, bbolt) or versions (Badger) for a run.
const readerRenew = 1024

// keySource is one load goroutine's random stream, checker and buffers.
type keySource struct {
	g   *dataset.Gen
	rng dataset.Rand
	smp *keydist.Sampler // nil: uniform
	chk *dataset.Checker
	kb  [dataset.KeySize]byte
	val []byte
	idx uint64 // the key being read
	// next's draw plus one (0: none), made ahead by prepare, untimed (a
	// skewed sampler draws in batches: one operation in 16 would pay for 16)
	drawn uint64
}

// next is the index of the next existing key it reads or rewrites: the
// one prepare drew, else one drawn now.
func (k *keySource) next() uint64 {
	if d := k.drawn; d > 0 {
		k.drawn = 0
		return d - 1
	}
	return k.draw()
}

// prepare draws next's key ahead, untimed (load.Config.Prepare), unless
// one is drawn already: no draw is dropped, so a call reads its stream's
// keys in order however its operations fall into windows.
func (k *keySource) prepare() {
	if k.drawn == 0 {
		k.drawn = k.draw() + 1
	}
}

func (k *keySource) draw() uint64 {
	if k.smp != nil {
		return k.smp.Next(&k.rng, k.g.Keys)
	}
	return k.rng.Below(k.g.Keys)
}

// newKeySource is a goroutine's share of the round's streams rs, its keys
// drawn from dist (nil: uniform).
func newKeySource(e *core.Env, rs core.Streams, stream uint64, dist *keydist.Params) keySource {
	k := keySource{g: e.Gen, rng: rs.Rand(stream), chk: e.Gen.NewChecker(e.FullCheck), val: make([]byte, e.Gen.ValueSize)}
	if dist != nil && dist.Kind != keydist.Uniform {
		k.smp = dist.NewSampler()
	}
	return k
}

// loadWorker is one load goroutine on an engine; padded: workers share
// no cache line.
type loadWorker struct {
	keySource
	db    engine.DB
	rd    engine.Reader
	reads int
	check func([]byte) error // verifies against idx; bound once
	_     [64]byte
}

// newLoadWorkers makes n workers on db, numbered from stream in the
// round's streams rs, drawing from dist (nil: uniform).
func newLoadWorkers(e *core.Env, db engine.DB, rs core.Streams, n int, stream uint64, dist *keydist.Params) []*loadWorker {
	ws := make([]*loadWorker, n)
	for i := range ws {
		w := &loadWorker{keySource: newKeySource(e, rs, stream+uint64(i), dist), db: db}
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
	w.idx = w.next()
	var key []byte
	if hit {
		key = w.g.Key(w.kb[:], w.idx)
	} else {
		key = w.g.MissKey(w.kb[:], w.idx)
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

// getMix reads a key that exists with probability hitRate.
func (w *loadWorker) getMix(hitRate float64) error { return w.get(w.rng.Float64() < hitRate) }

// put writes value idx under key idx in a batch of one: what one PUT of
// the seed's service does.
func (w *loadWorker) put(idx uint64) error {
	return engine.Put(w.db, w.g.Key(w.kb[:], idx), w.g.Value(w.val, idx))
}

// overwrite rewrites a random existing key. The value is the one the key
// already has, so concurrent readers can verify every read; the engine
// still writes it in full.
func (w *loadWorker) overwrite() error { return w.put(w.next()) }

// upserts numbers the new keys one leaf writes on its database: Keys,
// Keys+1, ..., one per completed operation, over every window and call.
type upserts struct{ n uint64 }

// run is one fixed-rate window of writes of new keys: put(w, idx) writes
// key idx.
func (u *upserts) run(e *core.Env, c load.Config, put func(w int, idx uint64) error) (*load.Result, error) {
	base := e.Gen.Keys + u.n
	r, err := load.Run(c, func(w int, seq uint64) error { return put(w, base+seq) })
	if r != nil {
		u.n += uint64(r.Done) // seq 0..Done-1 were written
	}
	return r, err
}

// verify reads back up to 1000 of the new keys, spread evenly over them,
// and checks every value.
func (u *upserts) verify(b *testing.B, e *core.Env, db engine.DB) {
	if err := readNew(db, e.Gen, u.n, max(1, u.n/1000)); err != nil {
		b.Fatalf("upserted %v", err)
	}
}

// readNew reads every step-th of the n keys written after the data set's
// (indexes Keys on) through a new reader of db, checking every value.
func readNew(db engine.DB, g *dataset.Gen, n, step uint64) error {
	rd, err := db.NewReader()
	if err != nil {
		return err
	}
	defer rd.Close()
	chk := g.NewChecker(true)
	var kb [dataset.KeySize]byte
	for s := uint64(0); s < n; s += step {
		idx := g.Keys + s
		found, err := rd.Get(g.Key(kb[:], idx), func(v []byte) error { return chk.Check(idx, v) })
		if err != nil {
			return fmt.Errorf("key %d (%d of %d written): %w", idx, s, n, err)
		}
		if !found {
			return fmt.Errorf("key %d is missing (%d of %d written)", idx, s, n)
		}
	}
	return nil
}

// windows runs b.N measured windows and merges them.
func windows(b *testing.B, run func() (*load.Result, error)) *load.Result {
	var total *load.Result
	for n := 0; n < b.N; n++ {
		res, err := run()
		if err != nil {
			b.Fatal(err)
		}
		total = merge(total, res)
	}
	return total
}

// merge adds window res to total (nil: none yet).
func merge(total, res *load.Result) *load.Result {
	if total == nil {
		return res
	}
	total.Scheduled += res.Scheduled
	total.Done += res.Done
	total.Unrun += res.Unrun
	total.Elapsed += res.Elapsed
	total.Latency = measure.Merge(total.Latency, res.Latency)
	total.Service = measure.Merge(total.Service, res.Service)
	total.Lag = measure.Merge(total.Lag, res.Lag)
	return total
}

// reportLoad emits the fixed-rate metrics (docs/methodology.md,
// "Fixed-rate load and the knee") and writes writeSpectrum's file.
func reportLoad(e *core.Env, b *testing.B, res *load.Result) {
	if n := res.Latency.Count(); n != res.Scheduled || res.Done+res.Unrun != res.Scheduled {
		b.Fatalf("%d operations scheduled, %d done, %d unrun, %d latencies: some are unaccounted for", res.Scheduled, res.Done, res.Unrun, n)
	}
	b.ReportMetric(1e9/res.Achieved(), "ns/op")
	b.ReportMetric(res.Achieved(), "achieved-ops/s")
	res.Latency.ReportAll(b.ReportMetric)
	if res.Target > 0 { // open loop only: a closed loop has no schedule to fall behind
		b.ReportMetric(100*float64(res.Unrun)/float64(res.Scheduled), "unrun-%")
	}
	if res.Lag.Count() > 0 { // the generator's own lateness; open loop only
		b.ReportMetric(float64(res.Lag.Percentile(99)), "lag-p99-ns")
	}
	fatalIf(b, writeSpectrum(e, b.Name(), res.Latency))
}

// writeSpectrum writes rec's HdrHistogram percentile spectrum (values in
// ns) to <latency_dir>/<name>.hgrm; nothing without -latency_dir.
func writeSpectrum(e *core.Env, name string, rec *measure.Recorder) error {
	return writeLatencyFile(e, name, ".hgrm", func(f io.Writer) error {
		fmt.Fprintf(f, "# %s: latency from intended start, ns\n", name)
		return rec.WriteSpectrum(f)
	})
}

// loadFlags are the flags all four fixed-rate workloads list (Load, Knee,
// HTTP, Bloom).
var loadFlags = []core.Option{rateFlag, writeRateFlag, loadTimeFlag, loadWorkersFlag, sloFlag,
	kneeTimeFlag, kneeFlushesFlag, kneeMaxTimeFlag, kneeStartFlag, kneeStepsFlag, sstTablesFlag, bloomFPRFlag, latencyDirFlag}

var (
	rateFlag = &core.Flag[RateList]{Name: "rate", Default: RateList{10000},
		Usage: "comma-separated target rates in operations per second, one rate=N sub-benchmark each (open loop)",
		Check: func(v RateList, _ *core.Config) error { return nonEmpty(len(v), "rate") },
		Echo:  func(v RateList, _ *core.Config, line func(string, any)) { line("rates", v.String()) }}
	writeRateFlag = &core.Flag[int]{Name: "write_rate", Default: 1000,
		Usage: "the writer's rate in operations per second in op=readwhilewriting",
		Check: rateRange}
	loadTimeFlag = &core.Flag[time.Duration]{Name: "load_time", Default: 5 * time.Second,
		Usage: "measured window of one fixed-rate run (one b.N iteration): every operation due in it runs; the backlog may run up to one more window",
		Check: windowRange}
	loadWorkersFlag = &core.Flag[int]{Name: "load_workers", Default: 4,
		Usage: "goroutines (HTTP: keep-alive connections) that take operations off the fixed-rate schedule",
		Check: ints(1, 4096),
		Echo: func(w int, _ *core.Config, line func(string, any)) {
			line("load-workers", w)
			line("load-latency", "HDR histogram of every operation due in the window, ns from its intended start (open loop, coordinated omission corrected); the backlog runs after the window for up to one more window, then any operation not started counts as unrun at its wait so far")
		}}
	sloFlag = &core.Flag[time.Duration]{Name: "slo", Default: 10 * time.Millisecond,
		Usage: "p99 latency a rate must stay under to count as sustained in BenchmarkKnee",
		Check: core.Within(1, time.Hour, "must be more than 0 and at most 1h"),
		Echo: func(s time.Duration, c *core.Config, line func(string, any)) {
			line("slo-p99", s)
			line("knee", kneeRule(c))
		}}
	// The knee's own flags are stated by sloFlag's knee line.
	kneeTimeFlag = &core.Flag[time.Duration]{Name: "knee_time", Default: 2 * time.Second,
		Usage: "measured window of each trial rate in BenchmarkKnee (its backlog may run up to one more window); upserts on an LSM may run longer (-knee_flushes)",
		Check: windowRange, Echo: noLines[time.Duration]}
	kneeFlushesFlag = &core.Flag[int]{Name: "knee_flushes", Default: 5,
		Usage: "how many memtable fills (N) each BenchmarkKnee upsert trial on an LSM spans, so that every trial holds its flushes and a level-0 compaction rather than by chance (5: a level-0 compaction comes every 4 flushes in Pebble and RocksDB, every 5 in Badger): at rate R a trial lasts max(-knee_time, N × memtable ÷ (R × (key + value bytes))), at most -knee_max_time; 0: -knee_time (B-trees and gets always run -knee_time)",
		Check: ints(0, 100), Echo: noLines[int]}
	kneeMaxTimeFlag = &core.Flag[time.Duration]{Name: "knee_max_time", Default: 20 * time.Second,
		Usage: "longest BenchmarkKnee upsert trial on an LSM (at least -knee_time); below -knee_flushes × memtable ÷ (this × (key + value bytes)) upserts/s a trial spans fewer than -knee_flushes fills: 16,132/s at the defaults (5 fills of 64 MiB memtables, 16-byte keys, 1 KiB values, 20s)",
		Check: func(d time.Duration, c *core.Config) error {
			if kt := kneeTimeFlag.Get(c); d < kt {
				return fmt.Errorf("must be at least -knee_time (%v)", kt)
			} else if d > 24*time.Hour {
				return errors.New("must be at most 24h")
			}
			return nil
		},
		Echo: noLines[time.Duration]}
	kneeStartFlag = &core.Flag[int]{Name: "knee_start", Default: 1000,
		Usage: "first rate BenchmarkKnee tries, in operations per second; it doubles from there",
		Check: rateRange, Echo: noLines[int]}
	kneeStepsFlag = &core.Flag[int]{Name: "knee_steps", Default: 4,
		Usage: "bisection steps BenchmarkKnee takes between the last sustained and the first failed rate",
		Check: ints(0, 20), Echo: noLines[int]}
	sstTablesFlag = &core.Flag[int]{Name: "sst_tables", Default: 100, Shapes: true,
		Usage: "unmerged tables in BenchmarkBloom's fixtures (Badger, RocksDB, Pebble; compactions off)",
		Check: func(n int, c *core.Config) error {
			if err := ints(1, 10_000)(n, c); err != nil {
				return err
			}
			if uint64(n) > c.Keys() {
				return errors.New("must not exceed the number of keys (-keys_mil)")
			}
			return nil
		}}
	bloomFPRFlag = &core.Flag[FPRList]{Name: "bloom_fpr", Default: FPRList{0, 0.01, 0.03, 0.5}, Shapes: true,
		Usage: "comma-separated Bloom filter false-positive rates for BenchmarkBloom (off: no filter), one bloom= sub-benchmark each",
		Check: func(v FPRList, _ *core.Config) error { return nonEmpty(len(v), "rate") }}
	latencyDirFlag = &core.Flag[string]{Name: "latency_dir",
		Usage: "existing directory to write each fixed-rate sub-benchmark's full HDR percentile spectrum into (one .hgrm file each), and each write leaf's throughput over time (Overwrite, YCSB with writes, Commit: one .tsv each)",
		Check: func(d string, _ *core.Config) error {
			if d == "" {
				return nil
			}
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				return errors.New("must be an existing directory")
			} else if err := unix.Access(d, unix.W_OK); err != nil {
				return errors.New("is not writable: " + err.Error())
			}
			return nil
		},
		Echo: func(d string, _ *core.Config, line func(string, any)) {
			if d != "" {
				line("latency-dir", d)
			}
		}}
)

// loadSettings is the fixed-rate workloads' flags as one value.
type loadSettings struct {
	Rates       RateList
	WriteRate   int
	LoadTime    time.Duration
	LoadWorkers int
	SLO         time.Duration
	KneeTime    time.Duration
	KneeFlushes int
	KneeMaxTime time.Duration
	KneeStart   int
	KneeSteps   int
	LatencyDir  string
	SSTTables   int
	BloomFPR    FPRList
}

// loadOf is the fixed-rate settings of c.
func loadOf(c *core.Config) loadSettings {
	return loadSettings{
		Rates: rateFlag.Get(c), WriteRate: writeRateFlag.Get(c), LoadTime: loadTimeFlag.Get(c), LoadWorkers: loadWorkersFlag.Get(c),
		SLO: sloFlag.Get(c), KneeTime: kneeTimeFlag.Get(c), KneeFlushes: kneeFlushesFlag.Get(c), KneeMaxTime: kneeMaxTimeFlag.Get(c),
		KneeStart: kneeStartFlag.Get(c), KneeSteps: kneeStepsFlag.Get(c), LatencyDir: latencyDirFlag.Get(c),
		SSTTables: sstTablesFlag.Get(c), BloomFPR: bloomFPRFlag.Get(c),
	}
}

// kneeRule is the configuration's knee line: how the knee is searched for.
func kneeRule(c *core.Config) string {
	trial := fmt.Sprintf("%v per trial", kneeTimeFlag.Get(c))
	if n := kneeFlushesFlag.Get(c); n > 0 {
		trial = fmt.Sprintf("%v per trial (upserts on an LSM: long enough to fill %d memtables, at most %v)", kneeTimeFlag.Get(c), n, kneeMaxTimeFlag.Get(c))
	}
	return fmt.Sprintf("from %d ops/s doubling, then %d bisection steps, %s, sustained = every operation due in the window done and p99 of all of them <= slo in each of %d trials (the first failed trial fails the rate)",
		kneeStartFlag.Get(c), kneeStepsFlag.Get(c), trial, kneeTrials)
}

// noLines is the Echo of a flag another flag's lines state.
func noLines[T any](T, *core.Config, func(string, any)) {}

// ints is the check of a whole number from lo to hi.
func ints(lo, hi int) func(int, *core.Config) error {
	return core.Within(lo, hi, fmt.Sprintf("must be from %d to %d", lo, hi))
}

// rateRange checks a rate flag; windowRange, a fixed-rate window.
var (
	rateRange   = core.Within(1, maxRate, fmt.Sprintf("must be from 1 to %d operations per second", maxRate))
	windowRange = core.Within(time.Millisecond, 24*time.Hour, "must be from 1ms to 24h")
)

// nonEmpty is the check of a list flag.
func nonEmpty(n int, what string) error {
	if n == 0 {
		return errors.New("must list at least one " + what)
	}
	return nil
}

// maxRate bounds every rate flag: far above what one machine serves, low
// enough that a typo does not schedule billions of operations.
const maxRate = 100_000_000

// RateList is a comma-separated list of operations per second.
type RateList []int

func (l *RateList) String() string { return (*core.IntList)(l).String() }

func (l *RateList) Set(v string) error {
	var out RateList
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxRate {
			return fmt.Errorf("%q is not a rate from 1 to %d operations per second", f, maxRate)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// FPRList is a list of Bloom filter false-positive rates; 0 is "off".
type FPRList []float64

func (l *FPRList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = fprName(v)
	}
	return strings.Join(s, ",")
}

func (l *FPRList) Set(v string) error {
	var out FPRList
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "off" {
			out = append(out, 0)
			continue
		}
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || !(p > 0 && p < 1) {
			return fmt.Errorf("%q is neither off nor a false-positive rate between 0 and 1", f)
		}
		out = append(out, p)
	}
	*l = out
	return nil
}

// fprName is how a false-positive rate appears in names and lines.
func fprName(p float64) string {
	if p == 0 {
		return "off"
	}
	return strconv.FormatFloat(p, 'g', -1, 64)
}
