package workload

import (
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/keydist"
	"github.com/kvbench/kvbench/internal/load"
	"github.com/kvbench/kvbench/internal/measure"
)

// Load: fixed-rate workloads. One b.N iteration is one measured window of
// -load_time: a rate is a property of time, not of an operation count.
// ns/op is reported as 1e9 / achieved-ops/s, the wall time per operation
// at the rate actually achieved.
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
			list := dists(&e.Cfg, "uniform")
			for _, op := range loadOps {
				for _, d := range list {
					p, err := keyDist(&e.Cfg, d, e.Keys)
					if err != nil {
						b.Fatal(err)
					}
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

// loadScratch is what a writing sub-benchmark of Load, Knee or HTTP puts
// in scratch: a copy of the engine's fixture (counted like a fixture, at
// three times the logical bytes) and the new keys of one window at the
// highest -rate. The rail writes to memory.
func loadScratch(e *core.Env, info engine.Info) int64 {
	if info.Reference {
		return 0
	}
	top := 0
	for _, r := range rateFlag.Get(&e.Cfg) {
		top = max(top, r)
	}
	window := int64(float64(top)*loadTimeFlag.Get(&e.Cfg).Seconds()) * int64(dataset.KeySize+e.Cfg.ValSize)
	return 3 * (e.Gen.LogicalBytes() + window)
}

// runLoad is the body of every BenchmarkLoad<Engine>/op=.../rate=N.
func runLoad(b *testing.B, e *core.Env, db engine.DB, op string, rate int, dist *keydist.Params, up *upserts) {
	c := loadOf(&e.Cfg)
	rs := e.CallStreams(b)
	ws := newLoadWorkers(e, db, rs, c.LoadWorkers, 2000)
	for _, w := range ws {
		w.drawFrom(dist)
	}
	defer closeLoadWorkers(ws)
	at := func(rate int) load.Config { // keys drawn ahead, untimed
		lc := c.at(rate)
		lc.Prepare = func(w int) { ws[w].prepare() }
		return lc
	}
	var res *load.Result
	b.ResetTimer()
	switch op {
	case "get-hit", "get-miss":
		hit := op == "get-hit"
		res = windows(b, func() (*load.Result, error) {
			return load.Run(at(rate), func(w int, _ uint64) error { return ws[w].get(hit) })
		})
	case "upsert":
		res = windows(b, func() (*load.Result, error) {
			return up.run(e, c.at(rate), func(w int, idx uint64) error { return ws[w].put(idx) })
		})
	case "overwrite":
		res = windows(b, func() (*load.Result, error) {
			return load.Run(at(rate), func(w int, _ uint64) error { return ws[w].overwrite() })
		})
	case "readwhilewriting":
		wr := newLoadWorkers(e, db, rs, 1, 3000)[0]
		wr.drawFrom(dist)
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
			r, err := load.Run(at(rate), func(w int, _ uint64) error { return ws[w].get(true) })
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

// at is one fixed-rate window at rate. Its drain is load's default, one
// more window: an engine that serves half the rate finishes every
// operation.
func (c loadSettings) at(rate int) load.Config {
	return load.Config{Rate: float64(rate), Duration: c.LoadTime, Workers: c.LoadWorkers}
}

// loadLeaf runs body as sub-benchmark name on the engine's shared fixture
// (h): read-only and warm when it only reads; when it writes, on a
// private copy of the fixture in scratch, removed when it ends, or, on
// the calibration rail, on a freshly loaded map. The engine's settings
// line for what body runs on is printed before the sub-benchmark starts.
func loadLeaf(e *core.Env, b *testing.B, h *core.Handle, name string, write bool, body func(b *testing.B, db engine.DB)) {
	if !write {
		h.Run(b, name, core.Warm, nil, body)
		return
	}
	h.Close(b) // the fixture is not read while its copy is written
	if h.Fixture().Engine.Reference {
		fresh := e.Open(b, h.Fixture())
		fresh.Run(b, name, core.Warm, nil, body)
		fresh.Close(b)
		return
	}
	info := h.Fixture().Engine
	o := h.Options(nil)
	name = core.BlockLeaf(name, info, o)
	w, err := openWorkCopy(e, h, b.Name()+"/"+name, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			b.Error(err)
		}
	}()
	e.ShowFixtureSettings(info, w.DB.Settings(), h.Fixture()) // a copy of the fixture
	b.Run(name, func(b *testing.B) { body(b, w.DB) })
}

// readerRenew is how many gets a worker serves from one engine Reader
// before it takes a fresh one, so that readers see recent writes and no
// read transaction pins old pages (LMDB, bbolt) or versions (Badger) for a
// whole run. It costs an allocation every so many operations.
const readerRenew = 1024

// keySource is one load goroutine's share of the data set: its own
// random stream, checker and buffers.
type keySource struct {
	g   *dataset.Gen
	rng dataset.Rand
	smp *keydist.Sampler // nil: uniform
	chk *dataset.Checker
	kb  [dataset.KeySize]byte
	val []byte
	idx uint64 // the key being read
	// next's draw, made ahead by prepare outside the operation's timing
	// (a skewed sampler draws in batches: one operation in 16 would pay
	// for 16 draws)
	drawn    uint64
	hasDrawn bool
}

// drawFrom makes the source draw its keys from dist (nil: uniform).
func (k *keySource) drawFrom(dist *keydist.Params) {
	k.smp = nil
	if dist != nil && dist.Kind != keydist.Uniform {
		k.smp = dist.NewSampler()
	}
}

// next is the index of the next existing key it reads or rewrites: the
// one prepare drew, else one drawn now.
func (k *keySource) next() uint64 {
	if k.hasDrawn {
		k.hasDrawn = false
		return k.drawn
	}
	return k.draw()
}

// prepare draws next's key ahead, untimed (load.Config.Prepare), unless
// one is drawn already: no draw is dropped, so a call reads its stream's
// keys in order however its operations fall into windows.
func (k *keySource) prepare() {
	if !k.hasDrawn {
		k.drawn, k.hasDrawn = k.draw(), true
	}
}

func (k *keySource) draw() uint64 {
	if k.smp != nil {
		return k.smp.Next(&k.rng, k.g.Keys)
	}
	return k.rng.Below(k.g.Keys)
}

// newKeySource is a goroutine's share of the round's streams rs.
func newKeySource(e *core.Env, rs core.Streams, stream uint64) keySource {
	return keySource{g: e.Gen, rng: rs.Rand(stream), chk: e.Gen.NewChecker(e.FullCheck), val: make([]byte, e.Gen.ValueSize)}
}

// loadWorker is one load goroutine's state on an engine; padded so
// workers never share a cache line.
type loadWorker struct {
	keySource
	db    engine.DB
	rd    engine.Reader
	reads int
	check func([]byte) error // verifies against idx; bound once
	_     [64]byte
}

// newLoadWorkers makes n workers on db, numbered from stream in the
// round's streams rs.
func newLoadWorkers(e *core.Env, db engine.DB, rs core.Streams, n int, stream uint64) []*loadWorker {
	ws := make([]*loadWorker, n)
	for i := range ws {
		w := &loadWorker{keySource: newKeySource(e, rs, stream+uint64(i)), db: db}
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
	g := w.g
	w.idx = w.next()
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

// upserts numbers the new keys one sub-benchmark writes on its database:
// Keys, Keys+1, ..., one per completed operation, over every window and
// every time testing runs the sub-benchmark.
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
	rd, err := db.NewReader()
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	g := e.Gen
	chk := g.NewChecker(true)
	var kb [dataset.KeySize]byte
	step := max(1, u.n/1000)
	for s := uint64(0); s < u.n; s += step {
		idx := g.Keys + s
		found, err := rd.Get(g.Key(kb[:], idx), func(v []byte) error { return chk.Check(idx, v) })
		if err != nil || !found {
			b.Fatalf("upserted key %d (%d of %d written): found=%v err=%v", idx, s, u.n, found, err)
		}
	}
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

// reportLoad emits the fixed-rate metrics and, with -latency_dir, writes
// the full percentile spectrum to a file named after the benchmark. The
// percentiles cover every scheduled operation; unrun-% is the share that
// the hard stop left unrun, whose latencies are lower bounds.
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
	if err := writeSpectrum(e, b.Name(), res.Latency); err != nil {
		b.Fatal(err)
	}
}

// writeSpectrum writes rec's HdrHistogram percentile spectrum (values in
// ns) to <latency_dir>/<name>.hgrm; nothing without -latency_dir.
func writeSpectrum(e *core.Env, name string, rec *measure.Recorder) error {
	return writeLatencyFile(e, name, ".hgrm", func(f io.Writer) error {
		fmt.Fprintf(f, "# %s: latency from intended start, ns\n", name)
		return rec.WriteSpectrum(f)
	})
}

// syncFS writes back everything dirty on the filesystem that holds dir.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
