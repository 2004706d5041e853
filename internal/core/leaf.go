package core

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// Run runs body as sub-benchmark name on the fixture in the cache state,
// opened with the fixture's options as tweak changes them. First it opens
// the handle (warm: and reads it once) and prints the engine's settings
// line for exactly those options, so benchfmt attaches it to this result
// alone. Each call of the sub-benchmark then reuses the open db (warm) or
// closes, evicts and reopens it untimed (cold; a body in ColdRounds takes
// that db as its first round).
func (h *Handle) Run(b *testing.B, name, cache string, tweak func(*engine.Options), body func(b *testing.B, db engine.DB)) {
	defer h.guard(b)()
	h.e.WatchLeaf(b.Name() + "/" + name) // opening and warming up count as its own
	o := h.Options(tweak)
	name = BlockLeaf(name, h.f.Engine, o)
	db := h.open(b, cache, o, true)
	h.e.ShowFixtureSettings(h.f.Engine, db.Settings(), h.f)
	b.Run(name, func(b *testing.B) {
		defer h.guard(b)()
		body(b, h.open(b, cache, o, false))
	})
}

// guard makes a memory fault in this goroutine (a mapped file changed
// under the map) a panic rather than a crash, and returns the function to
// defer that turns it into b's failure, naming the fixture and how to
// rebuild it. RunThreads hands its goroutines' faults to its caller. A
// fault inside C code (LMDB, RocksDB) still ends the process.
func (h *Handle) guard(b *testing.B) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		if !isFault(r) {
			panic(r)
		}
		// Abandoned, not closed: the faulted read still holds the
		// engine's locks, and Close would wait forever.
		h.db, h.fresh = nil, false
		b.Fatal(h.faultError(r))
	}
}

// faultError is the error of a memory fault reading the fixture.
func (h *Handle) faultError(r any) error {
	return fmt.Errorf("fixture %s: a read of its files faulted (%v): they changed or are damaged where the checks before the run do not look; rerun with -verify full to check every file's checksum and rebuild what differs, or remove %s to rebuild it", filepath.Base(h.dir), r, h.dir)
}

// isFault reports whether a recovered value is a memory fault
// (debug.SetPanicOnFault).
func isFault(r any) bool {
	_, ok := r.(interface{ Addr() uintptr })
	return ok
}

// TimeLoop is a leaf's timed loop of reads on the fixture in the cache
// state: op(t, n, rd) does n operations on goroutine t of threads through
// a reader of its own; its first error fails b. Cold, each of b.N ops is
// a round (ColdRounds) of Cfg.ColdRoundOps() operations, and ns/op, B/op
// and allocs/op are per operation (ReportPerOp). warm, when set, gives
// the operation of the untimed warm-up pass under Valgrind (SimPace).
func (h *Handle) TimeLoop(b *testing.B, cache string, threads int, pace SimPace, op func(t, n int, rd engine.Reader) error, warm func() func(t, n int, rd engine.Reader) error) Timed {
	readers := make([]engine.Reader, threads)
	openReaders := func(db engine.DB) {
		for t := range readers {
			r, err := db.NewReader()
			if err != nil {
				b.Fatal(err)
			}
			readers[t] = r
		}
	}
	closeReaders := func() {
		for t, r := range readers {
			if r != nil {
				r.Close()
				readers[t] = nil
			}
		}
	}
	defer closeReaders()           // before the handle closes the db, on failure too
	errs := make([]error, threads) // made here, outside the timed window
	// pass runs n operations of op over the goroutines, yielding after
	// every yield of them (0: never), and returns the first error.
	pass := func(n, yield int, op func(t, n int, rd engine.Reader) error) error {
		clear(errs)
		RunThreads(threads, n, func(t, left int) {
			rd := readers[t]
			if yield == 0 {
				errs[t] = op(t, left, rd)
				return
			}
			for left > 0 && errs[t] == nil {
				k := min(left, yield)
				errs[t] = op(t, k, rd)
				left -= k
				runtime.Gosched()
			}
		})
		for t, err := range errs {
			if err != nil {
				return fmt.Errorf("goroutine %d: %w", t, err)
			}
		}
		return nil
	}

	if cache == Cold {
		perRound := h.e.Cfg.ColdRoundOps()
		timed := h.ColdRounds(b, nil, func(db engine.DB) (func(), func()) {
			openReaders(db)
			return func() {
				if err := pass(perRound, 0, op); err != nil {
					b.Fatal(err)
				}
			}, closeReaders
		})
		timed.Ops = int64(b.N) * int64(perRound)
		timed.ReportPerOp(b, timed.Ops)
		timed.Disk.Report(b, timed.Ops)
		return timed
	}

	openReaders(h.db)
	if underValgrind && b.N > 1 && pace.Warm > 0 && warm != nil {
		if err := pass(pace.Warm, pace.Yield, warm()); err != nil {
			b.Fatalf("warm-up: %v", err)
		}
	}
	yield := 0
	if underValgrind {
		yield = pace.Yield
	}
	d0 := sampleDisk()
	cpu0 := measure.CPUTime()
	sched0 := sampleSched()
	b.ReportAllocs()
	b.ResetTimer()
	sim := startSim(b)
	start := time.Now()
	err := pass(b.N, yield, op)
	elapsed := time.Since(start)
	sim.stop()
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	cpu := measure.CPUTime() - cpu0
	if threads > 1 {
		if v := sampleSched().Percentile(sched0, 99); !math.IsNaN(v) {
			b.ReportMetric(v, "sched-p99-ns")
		}
	}
	timed := Timed{Ops: int64(b.N), Elapsed: elapsed, CPU: cpu, Disk: sampleDisk().Sub(d0)}
	timed.Disk.Report(b, timed.Ops)
	return timed
}

// RunThreads splits n operations over threads goroutines, fn(t, ops) in
// each, and waits for them. A memory fault in one panics in the caller's
// goroutine once all are done, where Handle.Run turns it into a failure.
func RunThreads(threads, n int, fn func(t, ops int)) {
	var wg sync.WaitGroup
	var once sync.Once
	var fault any
	for t := range threads {
		wg.Add(1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					if !isFault(r) {
						panic(r)
					}
					once.Do(func() { fault = r })
				}
				wg.Done()
			}()
			debug.SetPanicOnFault(true)
			ops := n / threads
			if t < n%threads {
				ops++
			}
			fn(t, ops)
		}()
	}
	wg.Wait()
	if fault != nil {
		panic(fault)
	}
}

// sched-p99-ns, the Go scheduler's wait over a leaf's timed window:
// docs/methodology.md, "The scheduler's wait beside a read's".
const schedMetric = "/sched/latencies:seconds"

// schedSample is the scheduler's latency histogram at one moment.
type schedSample struct {
	counts  []uint64
	buckets []float64
}

// sampleSched reads the histogram now; it allocates.
func sampleSched() schedSample {
	s := []metrics.Sample{{Name: schedMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return schedSample{}
	}
	h := s[0].Value.Float64Histogram()
	return schedSample{counts: append([]uint64(nil), h.Counts...), buckets: h.Buckets}
}

// Percentile is the p-th percentile (0 to 100), in ns, of the waits
// between prev and s: the upper edge of its bucket (a few per power of
// two). NaN when nothing waited.
func (s schedSample) Percentile(prev schedSample, p float64) float64 {
	if len(s.counts) == 0 || len(prev.counts) != len(s.counts) {
		return math.NaN()
	}
	var total uint64
	for i, c := range s.counts {
		total += c - prev.counts[i]
	}
	if total == 0 {
		return math.NaN()
	}
	want := uint64(math.Ceil(p / 100 * float64(total)))
	var seen uint64
	for i, c := range s.counts {
		if seen += c - prev.counts[i]; seen >= want {
			edge := s.buckets[i+1]
			if math.IsInf(edge, 1) {
				edge = s.buckets[i]
			}
			return edge * 1e9
		}
	}
	return math.NaN()
}
