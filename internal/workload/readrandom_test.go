package workload

import (
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/core/coretest"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// delayDB wraps the reference rail and makes every read take a known time:
// slowEvery-th keys (by index) take slow, every other key fast. The reads
// still go to the rail and are still verified by readRandom. Each reader
// also notes when every Get began and ended: those readRandom sampled,
// timed inside Get, are the truth the harness's figures must match, and
// the time between Gets bounds what the harness may add to each.
type delayDB struct {
	engine.DB
	gen        *dataset.Gen
	fast, slow time.Duration
	slowEvery  uint64
	mu         sync.Mutex
	readers    []*delayReader
}

type delayReader struct {
	engine.Reader
	db     *delayDB
	opened time.Time
	starts []time.Duration // of each Get, since opened, in order
	ends   []time.Duration
}

func (d *delayDB) NewReader() (engine.Reader, error) {
	r, err := d.DB.NewReader()
	dr := &delayReader{Reader: r, db: d, opened: time.Now(), starts: make([]time.Duration, 0, 1<<16), ends: make([]time.Duration, 0, 1<<16)}
	d.mu.Lock()
	d.readers = append(d.readers, dr)
	d.mu.Unlock()
	return dr, err
}

// truth is the reads of the last len(streams) readers that readRandom
// sampled, reader t as streams[t] does, timed inside Get; bound is each of them
// plus the time outside any Get before and after it (to the reader's
// opening before the first, to now after the last). The harness's timer
// around Get takes a read's time and part of those gaps, whatever the
// machine does: at each rank its figure is between the two.
func (d *delayDB) truth(streams readStreams) (truth, bound *measure.Recorder) {
	truth, bound = measure.NewRecorder(), measure.NewRecorder()
	rs := d.readers[len(d.readers)-len(streams):]
	for t, r := range rs {
		now := time.Since(r.opened)
		for i := range r.starts {
			if !streams[t].Sampled(int64(i)) {
				continue
			}
			prevEnd, nextStart := time.Duration(0), now
			if i > 0 {
				prevEnd = r.ends[i-1]
			}
			if i+1 < len(r.starts) {
				nextStart = r.starts[i+1]
			}
			truth.Record(r.ends[i] - r.starts[i])
			bound.Record(nextStart - prevEnd)
		}
	}
	return truth, bound
}

func (r *delayReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	d := r.db.fast
	if i, _ := r.db.gen.Index(key); i%r.db.slowEvery == 0 {
		d = r.db.slow
	}
	t0 := time.Now()
	// Spin rather than sleep: a sleep's wake-up is late by a scheduler
	// tick on some kernels, and the test is about the harness, not timers.
	for time.Since(t0) < d {
	}
	found, err := r.Reader.Get(key, fn)
	r.starts = append(r.starts, t0.Sub(r.opened))
	r.ends = append(r.ends, time.Since(r.opened))
	return found, err
}

// TestReadRandomPercentilesMatchInjectedDelays runs readRandom, sampling
// included, over reads of known duration and checks the percentiles it
// reports: 98% of reads take 20µs and 2% take 400µs, so p50 is 20µs and
// p99 and p999 are 400µs, each plus the harness's own cost, which is
// bounded by the time between reads.
func TestReadRandomPercentilesMatchInjectedDelays(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark for about a second")
	}
	c := core.Default()
	c.KeysMil, c.ValSize, c.ValueRatio, c.Seed = 0.005, 64, 1, 7
	e, err := core.NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.Running.Store(true)
	const fast, slow = 20 * time.Microsecond, 400 * time.Microsecond
	db := &delayDB{gen: e.Gen, fast: fast, slow: slow, slowEvery: 50}
	wrap := func(mem engine.DB) engine.DB { db.DB = mem; return db }
	// A fixed count, whatever -benchtime the run was given: 100,000 reads
	// give about 3,000 samples, 60 of them slow, so p99 and p999 sit well
	// inside the slow ones.
	coretest.SetBenchtime(t, "100000x")
	r := testing.Benchmark(func(b *testing.B) {
		h := railHandle(b, e, wrap)
		h.DB(b, core.Warm, nil)
		readLeaf(b, e, h, core.Warm, readRandomRun{threads: 2, hitRate: 1})
	})
	if r.N == 0 {
		t.Fatal("the benchmark failed")
	}
	// testing.Benchmark runs one read first, then r.N: the last two
	// readers are the run reported, in the last call.
	truth, bound := db.truth(callReadStreams(e, e.Calls(""), 2))
	for _, msg := range checkAgainstTruth(r, truth, bound, fast, slow) {
		t.Error(msg)
	}
}

// checkAgainstTruth compares readRandom's reported figures with the same
// sampled reads timed inside Get (truth), with those reads and the gaps
// around them (bound), and with the injected delays. A stall of the
// machine inside a read is in the truth, and one outside any read is in
// the bound: no check depends on how fast the machine is.
func checkAgainstTruth(r testing.BenchmarkResult, truth, bound *measure.Recorder, fast, slow time.Duration) []string {
	var errs []string
	if hit := r.Extra["hit%"]; hit != 100 {
		errs = append(errs, fmt.Sprintf("hit%% = %v, want 100", hit))
	}
	// Two readers share r.N reads; each times 1 in 32 of them.
	every := core.LatencySample
	if n, lo, hi := truth.Count(), int64(r.N/every-2), int64(r.N/every+2); n < lo || n > hi {
		errs = append(errs, fmt.Sprintf("%d of %d reads sampled, want 1 in %d per reader", n, r.N, every))
	}
	for _, c := range []struct {
		metric string
		p      float64
		floor  time.Duration // what the injected delays alone guarantee
	}{{"p50-ns", 50, fast}, {"p99-ns", 99, slow}, {"p999-ns", 99.9, slow}} {
		got := time.Duration(r.Extra[c.metric])
		lo, hi := time.Duration(truth.Percentile(c.p)), time.Duration(bound.Percentile(c.p))
		if got < lo || got > hi {
			errs = append(errs, fmt.Sprintf("%s = %v; the same reads timed inside Get give %v, with the time between Gets %v (reads %d)", c.metric, got, lo, hi, r.N))
		}
		if got < c.floor {
			errs = append(errs, fmt.Sprintf("%s = %v, below the injected %v", c.metric, got, c.floor))
		}
	}
	return errs
}

// callReadStreams are the first threads read streams of call n, as
// ReadRandom drew them.
func callReadStreams(e *core.Env, n uint64, threads int) readStreams {
	return newReadStreams(e, e.StreamsOfCall(n), readRandomRun{threads: threads, hitRate: 1})
}
