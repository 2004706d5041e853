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
	db, err := engine.Open("memory", engine.Options{Dir: t.TempDir(), ExpectedBytes: e.Gen.LogicalBytes()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := e.WriteAll(db, core.GenSource{G: e.Gen}, 1000, 1, "memory load"); err != nil {
		t.Fatal(err)
	}
	return e, db
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
	bodies := map[string]func(b *testing.B, e *core.Env, db engine.DB){
		"ReadRandom": func(b *testing.B, e *core.Env, db engine.DB) {
			readRandom(b, e, db, readRandomRun{threads: 1, hitRate: 0.5})
		},
		"Scan": func(b *testing.B, e *core.Env, db engine.DB) { scan(b, e, db, 1) },
		"Load": func(b *testing.B, e *core.Env, db engine.DB) { runLoad(b, e, db, "get-hit", 2000, nil, nil) },
	}
	for name, body := range bodies {
		coretest.CheckCalls(t, name, func(seed uint64) [][]string {
			e, db := railEnv(t, seed)
			log := &coretest.KeyLog{}
			ldb := &logDB{DB: db, log: log}
			for range 2 {
				r := testing.Benchmark(func(b *testing.B) {
					log.Mark()
					body(b, e, ldb)
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
		p := samplePhases(e, n, 1)[0]
		phases[p] = true
		if p&core.LatencySampleMask == 0 {
			first++
		}
	}
	if first > 8 || len(phases) < 16 {
		t.Errorf("op 0 timed in %d of 64 calls, %d distinct phases", first, len(phases))
	}
}
