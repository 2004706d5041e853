package workload

import (
	"io"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/engine"
)

type logDB struct {
	engine.DB
	log *coretest.KeyLog
}

func (d *logDB) NewReader() (engine.Reader, error) {
	r, err := d.DB.NewReader()
	return &logReader{Reader: r, log: d.log}, err
}

type logReader struct {
	engine.Reader
	log *coretest.KeyLog
}

func (r *logReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	r.log.Add(key)
	return r.Reader.Get(key, fn)
}

func (r *logReader) NewIter(o engine.IterOptions) (engine.Iterator, error) {
	r.log.Add(o.Start)
	return r.Reader.NewIter(o)
}

// railEnv is a run of seed on the calibration rail, loaded with the data
// set: one reader or worker at a time, so a call's keys come in order.
func railEnv(t *testing.T, seed uint64) (*core.Env, engine.DB) {
	t.Helper()
	c := core.Default()
	c.KeysMil, c.ValSize, c.Seed = 0.005, 64, seed
	withLoad(&c, func(l *loadSettings) { l.LoadWorkers, l.LoadTime = 1, 5*time.Millisecond })
	e, err := core.NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.Running.Store(true)
	db, _ := loadedDB(t, e, "memory")
	return e, db
}

// railHandle is a handle, for b, on the rail's fixture of e's data set
// whose every db is wrap of the one the rail opens (and loads), which
// h.DB opens: a test reads what a leaf does through it.
func railHandle(b *testing.B, e *core.Env, wrap func(engine.DB) engine.DB) *core.Handle {
	info, ok := engine.Lookup("memory")
	if !ok || !info.Reference {
		b.Fatal("the memory rail is not registered")
	}
	f := e.KVFor(info)
	open := f.Engine.Open
	f.Engine.Open = func(o engine.Options) (engine.DB, error) {
		db, err := open(o)
		if err != nil {
			return nil, err
		}
		return wrap(db), nil
	}
	return e.Open(b, f)
}

// readLeaf and scanLeaf are ReadRandom's and Scan's leaf bodies as their
// Run hands them to Handle.Run, on h's db in the cache state, which the
// caller opened (Handle.DB) as Run does.
func readLeaf(b *testing.B, e *core.Env, h *core.Handle, cache string, rr readRandomRun) {
	streams := newReadStreams(e, e.CallStreams(b), rr)
	warm := func() func(t, n int, rd engine.Reader) error { return newReadStreams(e, e.CallStreams(b), rr).read }
	reportReads(b, streams, h.TimeLoop(b, cache, rr.threads, core.SimReads, streams.read, warm))
}

func scanLeaf(b *testing.B, e *core.Env, h *core.Handle, cache string, threads int) {
	streams := newScanStreams(e, e.CallStreams(b), threads)
	warm := func() func(t, n int, rd engine.Reader) error {
		return newScanStreams(e, e.CallStreams(b), threads).scan
	}
	reportScans(b, streams, h.TimeLoop(b, cache, threads, core.SimScans, streams.scan, warm))
}

// TestCallsReadTheirOwnKeys holds each workload body here that draws
// random keys to the rule of core.CallStreams (coretest.CheckCalls): at
// b.N = 10 a call reads at least 10 keys of 5,000, which two calls drawn
// from one stream share from the first and two of their own share by
// chance about once in 5,000^10. (The fixed-rate body runs a window of
// time per op, and its histograms, three a window, are most of the
// test's time under -race.)
func TestCallsReadTheirOwnKeys(t *testing.T) {
	coretest.SetBenchtime(t, "10x")
	// Each body reads through wrap: the rail's db a handle opens, or db,
	// the rail loaded once.
	bodies := map[string]func(b *testing.B, e *core.Env, wrap func(engine.DB) engine.DB, db engine.DB){
		"ReadRandom": func(b *testing.B, e *core.Env, wrap func(engine.DB) engine.DB, _ engine.DB) {
			h := railHandle(b, e, wrap)
			h.DB(b, core.Warm, nil)
			readLeaf(b, e, h, core.Warm, readRandomRun{threads: 1, hitRate: 0.5})
		},
		"Scan": func(b *testing.B, e *core.Env, wrap func(engine.DB) engine.DB, _ engine.DB) {
			h := railHandle(b, e, wrap)
			h.DB(b, core.Warm, nil)
			scanLeaf(b, e, h, core.Warm, 1)
		},
		"Load": func(b *testing.B, e *core.Env, wrap func(engine.DB) engine.DB, db engine.DB) {
			runLoad(b, e, wrap(db), "get-hit", 2000, nil, nil)
		},
	}
	for name, body := range bodies {
		coretest.CheckCalls(t, name, func(seed uint64) [][]string {
			e, db := railEnv(t, seed)
			log := &coretest.KeyLog{}
			wrap := func(db engine.DB) engine.DB { return &logDB{DB: db, log: log} }
			for range 2 {
				r := testing.Benchmark(func(b *testing.B) {
					log.Mark()
					body(b, e, wrap, db)
				})
				if r.N != 10 {
					t.Fatalf("%s: the benchmark failed (N=%d)", name, r.N)
				}
			}
			return log.Calls()
		})
	}
}

// TestSamplePhaseVaries: the reads ReadRandom times are not always the
// same op numbers: over 64 calls the first read after an open is timed
// in about 1 call in 32, not in all of them.
func TestSamplePhaseVaries(t *testing.T) {
	e, _ := railEnv(t, 1)
	first := 0
	phases := map[int64]bool{}
	for n := uint64(1); n <= 64; n++ {
		s := callReadStreams(e, n, 1)[0]
		op := int64(0) // the first sampled op: the phase, counted back from 32
		for !s.Sampled(op) {
			op++
		}
		phases[op] = true
		if op == 0 {
			first++
		}
	}
	if first > 8 || len(phases) < 16 {
		t.Errorf("op 0 timed in %d of 64 calls, %d distinct phases", first, len(phases))
	}
}
