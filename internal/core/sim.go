package core

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/valgrind"
)

// underValgrind is read once: outside Valgrind a timed window costs one
// branch at its start and one at its end, nothing inside the loop.
var underValgrind = valgrind.Running()

// TimeLoop's warm-up runs untimed operations before a counted window,
// under Valgrind only (uninstrumented, so at several times native
// speed). The Go runtime fills a type assertion's cache on about 1 in 1024
// of its misses, at random (runtime.typeAssert), so a call path first taken
// inside the window costs a varying number of slow lookups: in 2,000
// counted Pebble reads that was 17,000 to 99,000 instructions from one run
// to the next, 0.9% of the window. After 10,000 passes a site is cached
// but for a chance of e^-10.
//
// The b.N=1 probe Go runs before the counted b.N is not warmed: its count
// is never reported (benchstat/sim reports the b.N of the result line).

// SimPace is how a warm leaf's timed loop runs under Valgrind: the
// operations of its untimed warm-up pass and how often it yields.
type SimPace struct{ Warm, Yield int }

// The paces of point reads and of scans.
var (
	SimReads = SimPace{SimWarmReads, SimYieldReads}
	SimScans = SimPace{SimWarmScans, SimYieldScans}
)

// TimeLoop is a warm leaf's timed loop, wrapped in one place: b.N
// operations split over threads goroutines, op(t, n) doing n of them on
// goroutine t, inside the benchmark's timer and callgrind's window (Under
// Valgrind the loop yields every pace.Yield operations, after an untimed
// warm-up pass of pace.Warm operations through the fresh states warm
// makes; check runs after that pass). It reports the scheduler's wait
// (sched-p99-ns) and returns the loop's wall and CPU time and disk
// counters (b.ReportAllocs reports its allocations).
func TimeLoop(b *testing.B, threads int, pace SimPace, op func(t, n int), warm func() (op func(t, n int), check func())) Timed {
	if underValgrind && b.N > 1 {
		wop, check := warm()
		RunThreads(threads, pace.Warm, pace.yielding(wop))
		check()
	}
	d0 := SampleDisk()
	cpu0 := measure.CPUTime()
	sched0 := SampleSched()
	b.ReportAllocs()
	b.ResetTimer()
	sim := StartSim(b)
	start := time.Now()
	RunThreads(threads, b.N, pace.yielding(op))
	elapsed := time.Since(start)
	sim.Stop()
	b.StopTimer()
	cpu := measure.CPUTime() - cpu0
	ReportSched(b, threads, sched0)
	return Timed{Elapsed: elapsed, CPU: cpu, Disk: SampleDisk().Sub(d0)}
}

// RunThreads splits n operations over threads goroutines, fn(t, ops) in
// each, and waits for them all. A memory fault in one (a mapped file
// damaged under the map) panics in the caller's goroutine once all are
// done, where Handle.Run turns it into the benchmark's failure.
func RunThreads(threads, n int, fn func(t, ops int)) {
	var wg sync.WaitGroup
	var once sync.Once
	var fault any
	for t := 0; t < threads; t++ {
		ops := n / threads
		if t < n%threads {
			ops++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					if !isFault(r) {
						panic(r)
					}
					once.Do(func() { fault = r })
				}
			}()
			debug.SetPanicOnFault(true)
			fn(t, ops)
		}()
	}
	wg.Wait()
	if fault != nil {
		panic(fault)
	}
}

// simSettle is how long a window waits, uncounted, for background
// goroutines to drain what came before it.
const simSettle = 50 * time.Millisecond

// The warm-up passes of point reads and of scans: a scan takes each of its
// per-entry paths scan_len times, so fewer scans fill the same caches (a
// path taken once per scan and left uncached costs a scan of 77,000 or
// more instructions about 50 more: under 0.1%).
const (
	SimWarmReads = 10_000
	SimWarmScans = 200
)

// SimWindow marks one timed loop for callgrind (benchstat/sim): its
// counters are zeroed where the loop starts and dumped where it ends, in
// a dump described by valgrind.WindowReason, so a leaf's instructions
// exclude its setup, the fixture's warm-up and every other leaf.
type SimWindow struct {
	reason            []byte
	gcPercent, memLim int64
	memProfileRate    int
}

// simHeadroom is how much a window may allocate before the collector,
// off inside it, runs anyway: a guard for windows far larger than the
// gate's, not a setting that shapes a count.
const simHeadroom = 2 << 30

// StartSim opens b's window; call it right after b.ResetTimer (or
// StartTimer) and end it with Stop right before b.StopTimer.
func StartSim(b *testing.B) SimWindow {
	if !underValgrind {
		return SimWindow{}
	}
	// Built before the zero, so the name's allocation is not counted.
	r := valgrind.WindowReason(b.Name(), b.N)
	// Every window starts from a settled process: no GC cycle half done,
	// no backlog of an engine's background goroutines (Badger's cache
	// policy drains a buffer of reads) left by the set-up or a warm-up.
	// FreeOSMemory collects and then returns every free page to the OS, so
	// the window's new spans all come from pages the runtime need not zero;
	// after a bare runtime.GC, how many free pages the background scavenger
	// had returned by then decided how much the window spent zeroing
	// reused ones (runtime.memclrNoHeapPointers: 122 or 323 instructions
	// per Badger read).
	debug.FreeOSMemory()
	time.Sleep(simSettle)
	// No collection inside the window: whether a cycle starts in 2,000
	// reads depends on where the heap stood, not on the code under test (a
	// Badger window a cycle started in counted 24% more instructions than
	// its neighbours). Allocation is counted by B/op and allocs/op instead.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := SimWindow{reason: r, gcPercent: int64(debug.SetGCPercent(-1))}
	w.memLim = debug.SetMemoryLimit(int64(ms.HeapAlloc) + simHeadroom)
	// No allocation sampling inside the window: the runtime records a
	// stack for one allocation in about every 512 KiB, at random points,
	// and each record unwinds the stack (0 to 200,000 instructions in a
	// window of Badger's 2,000 reads, 37 million).
	w.memProfileRate, runtime.MemProfileRate = runtime.MemProfileRate, 0
	valgrind.StartInstrumentation()
	valgrind.ZeroStats()
	return w
}

// Pause stops counting until Resume, for a timed interval in pieces (a
// populate op's, between b.StartTimer and b.StopTimer): the counts so far
// are kept, and code run meanwhile, background goroutines' included, is
// not instrumented.
func (w SimWindow) Pause() {
	if w.reason != nil {
		valgrind.StopInstrumentation()
	}
}

// Resume counts again after Pause.
func (w SimWindow) Resume() {
	if w.reason != nil {
		valgrind.StartInstrumentation()
	}
}

// How many ops a timed loop does between yields under Valgrind. Badger's
// block cache hands each read's cache updates to two goroutines
// (ristretto's set buffer,
// and batches of 64 recorded reads on a channel of 3 that drops what does
// not fit); a yield at least every 64 point reads lets both keep up, so
// none of that work is dropped or put off. A scan reads several blocks,
// so scans yield after each one (a yield is a few hundred instructions, a
// scan 77,000 or more).
const (
	SimYieldReads = 64
	SimYieldScans = 1
)

// yielding is op as a timed loop or a warm-up pass runs it: outside
// Valgrind, op itself. Under Valgrind it calls op with at most p.Yield
// ops at a time and yields the processor after each call, the last one
// included, so an engine's background goroutines do the work the ops
// hand them at the same points in every run, inside the window that
// caused it. Without the yields, under GOMAXPROCS=1 they ran only when
// Go's monitor thread preempted the loop, and that thread ran through
// some windows and not at all in others: Badger's reads counted about
// 18.3k or 14.2k instructions each (docs/gating.md, "Simulation mode").
func (p SimPace) yielding(op func(t, n int)) func(t, n int) {
	if !underValgrind {
		return op
	}
	return func(t, n int) {
		for n > 0 {
			k := min(n, p.Yield)
			op(t, k)
			n -= k
			runtime.Gosched()
		}
	}
}

// Stop dumps the window's counters.
func (w SimWindow) Stop() {
	if w.reason != nil {
		valgrind.DumpStatsAt(w.reason)
		valgrind.StopInstrumentation()
		runtime.MemProfileRate = w.memProfileRate
		debug.SetGCPercent(int(w.gcPercent))
		debug.SetMemoryLimit(w.memLim)
	}
}
