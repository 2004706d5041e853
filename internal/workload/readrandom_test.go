package workload

import (
	"fmt"
	"io"
	"strings"
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
// also times every read from inside Get; those readRandom sampled are the
// truth the harness's figures must match even when the machine adds
// stalls of its own.
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
	db   *delayDB
	durs []time.Duration // of each Get, in order
}

func (d *delayDB) NewReader() (engine.Reader, error) {
	r, err := d.DB.NewReader()
	dr := &delayReader{Reader: r, db: d, durs: make([]time.Duration, 0, 1<<16)}
	d.mu.Lock()
	d.readers = append(d.readers, dr)
	d.mu.Unlock()
	return dr, err
}

// truth is the reads of the last len(phases) readers that readRandom
// sampled, reader t at phases[t], timed inside Get.
func (d *delayDB) truth(phases []int64) *measure.Recorder {
	rec := measure.NewRecorder()
	rs := d.readers[len(d.readers)-len(phases):]
	for t, r := range rs {
		for i, dur := range r.durs {
			if (int64(i)+phases[t])&core.LatencySampleMask == 0 {
				rec.Record(dur)
			}
		}
	}
	return rec
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
	r.durs = append(r.durs, time.Since(t0))
	return found, err
}

// TestReadRandomPercentilesMatchInjectedDelays runs readRandom, sampling
// included, over reads of known duration and checks the percentiles it
// reports: 98% of reads take 20µs and 2% take 400µs, so p50 is 20µs and
// p99 and p999 are 400µs, each plus the harness's own small cost.
func TestReadRandomPercentilesMatchInjectedDelays(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark for about a second")
	}
	info, ok := engine.Lookup("memory")
	if !ok || !info.Reference {
		t.Fatal("the memory rail is not registered")
	}
	c := core.Default()
	c.KeysMil, c.ValSize, c.ValueRatio, c.Seed = 0.005, 64, 1, 7
	e, err := core.NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.Running.Store(true)
	mem, err := engine.Open(info.Name, engine.Options{Dir: t.TempDir(), ExpectedBytes: e.Gen.LogicalBytes()})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := e.WriteAll(mem, core.GenSource{G: e.Gen}, 1000, 1, "memory load"); err != nil {
		t.Fatal(err)
	}
	const fast, slow = 20 * time.Microsecond, 400 * time.Microsecond
	db := &delayDB{DB: mem, gen: e.Gen, fast: fast, slow: slow, slowEvery: 50}
	// A fixed count, whatever -benchtime the run was given: 100,000 reads
	// give about 3,000 samples, 60 of them slow, so p99 and p999 sit well
	// inside the slow ones.
	coretest.SetBenchtime(t, "100000x")
	// A reader descheduled between the harness's timestamp and Get's (a
	// busy machine) can own the top samples that make p999: a real stall,
	// not a harness error. So up to five attempts: a wrong rank, sample or
	// merge fails every one.
	var errs []string
	for attempt := 1; attempt <= 5; attempt++ {
		db.readers = nil
		r := testing.Benchmark(func(b *testing.B) { readRandom(b, e.Bench(), db, readRandomRun{threads: 2, hitRate: 1}) })
		if r.N == 0 {
			t.Fatal("the benchmark failed")
		}
		// testing.Benchmark runs one read first, then r.N: the last two
		// readers are the run reported, in the last call.
		errs = checkAgainstTruth(r, db.truth(samplePhases(e, e.Calls(""), 2)), fast, slow)
		if len(errs) == 0 {
			return
		}
		t.Logf("attempt %d: %s", attempt, strings.Join(errs, "; "))
	}
	t.Error(strings.Join(errs, "\n"))
}

// checkAgainstTruth compares readRandom's reported figures with the same
// sampled reads timed inside Get and with the injected delays.
func checkAgainstTruth(r testing.BenchmarkResult, truth *measure.Recorder, fast, slow time.Duration) []string {
	var errs []string
	if hit := r.Extra["hit%"]; hit != 100 {
		errs = append(errs, fmt.Sprintf("hit%% = %v, want 100", hit))
	}
	// Two readers share r.N reads; each times 1 in 32 of them.
	every := core.LatencySampleMask + 1
	if n, lo, hi := truth.Count(), int64(r.N/every-2), int64(r.N/every+2); n < lo || n > hi {
		errs = append(errs, fmt.Sprintf("%d of %d reads sampled, want 1 in %d per reader", n, r.N, every))
	}
	for _, c := range []struct {
		metric string
		p      float64
		floor  time.Duration // what the injected delays alone guarantee
	}{{"p50-ns", 50, fast}, {"p99-ns", 99, slow}, {"p999-ns", 99.9, slow}} {
		got := time.Duration(r.Extra[c.metric])
		want := time.Duration(truth.Percentile(c.p))
		// Timed outside Get, every read is a little longer: a timestamp
		// pair and a map lookup, 5% or 3µs, whichever is more, plus HDR's
		// rounding. A stall that fell outside Get's own timing moves one
		// sample up: up to half the distance to the top rank is allowed.
		upper := time.Duration(truth.Percentile(c.p + (100-c.p)/2))
		if got < want || got > upper+max(upper/20, 3*time.Microsecond) {
			errs = append(errs, fmt.Sprintf("%s = %v; the same reads timed inside Get give %v to %v (reads %d)", c.metric, got, want, upper, r.N))
		}
		if got < c.floor {
			errs = append(errs, fmt.Sprintf("%s = %v, below the injected %v", c.metric, got, c.floor))
		}
	}
	// Order of magnitude: a rank or merge error that lets the slow reads
	// into p50 reports 400 µs, 16 times this bound; harness overhead is a
	// few µs, and a run a busy machine spoiled is retried.
	if p50 := time.Duration(r.Extra["p50-ns"]); p50 > fast+fast/4 {
		errs = append(errs, fmt.Sprintf("p50-ns = %v, want about the injected %v", p50, fast))
	}
	return errs
}

// samplePhases are the sampling phases of the first threads read streams
// of call n.
func samplePhases(e *core.Env, n uint64, threads int) []int64 {
	streams := newReadStreams(e.Bench(), e.StreamsOfCall(n), make([]*measure.Recorder, threads), readRandomRun{threads: threads, hitRate: 1})
	out := make([]int64, threads)
	for t, s := range streams {
		out[t] = s.phase
	}
	return out
}
