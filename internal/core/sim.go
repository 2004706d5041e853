package core

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

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

// The paces of point reads, of range scans, and of full scans, which
// take each of their paths so many times over that they need neither a
// warm-up pass (the handle's warm-up scanned the fixture) nor yields.
var (
	SimReads     = SimPace{simWarmReads, simYieldReads}
	SimScans     = SimPace{simWarmScans, simYieldScans}
	SimFullScans = SimPace{}
)

// simSettle is how long a window waits, uncounted, for background
// goroutines to drain what came before it.
const simSettle = 50 * time.Millisecond

// The warm-up passes of point reads and of scans: a scan takes each of its
// per-entry paths scan_len times, so fewer scans fill the same caches (a
// path taken once per scan and left uncached costs a scan of 77,000 or
// more instructions about 50 more: under 0.1%).
const (
	simWarmReads = 10_000
	simWarmScans = 200
)

// simWindow marks one timed loop for callgrind (benchstat/sim): its
// counters are zeroed where the loop starts and dumped where it ends, in
// a dump described by valgrind.WindowReason, so a leaf's instructions
// exclude its setup, the fixture's warm-up and every other leaf.
type simWindow struct {
	reason            []byte
	gcPercent, memLim int64
	memProfileRate    int
}

// simHeadroom is how much a window may allocate before the collector,
// off inside it, runs anyway: a guard for windows far larger than the
// gate's, not a setting that shapes a count.
const simHeadroom = 2 << 30

// startSim opens b's window; call it right after b.ResetTimer (or
// StartTimer) and end it with stop right before b.StopTimer.
func startSim(b *testing.B) simWindow {
	if !underValgrind {
		return simWindow{}
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
	w := simWindow{reason: r, gcPercent: int64(debug.SetGCPercent(-1))}
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

// pause stops counting until resume: the counts so far are kept, and
// code run meanwhile, background goroutines' included, is not
// instrumented.
func (w simWindow) pause() {
	if w.reason != nil {
		valgrind.StopInstrumentation()
	}
}

// resume counts again after pause.
func (w simWindow) resume() {
	if w.reason != nil {
		valgrind.StartInstrumentation()
	}
}

// How many ops a timed loop does between yields under Valgrind, where it
// yields the processor after each batch, the last one included, so an
// engine's background goroutines do the work the ops hand them at the
// same points in every run, inside the window that caused it. Without the
// yields, under GOMAXPROCS=1 they ran only when Go's monitor thread
// preempted the loop, and that thread ran through some windows and not at
// all in others: Badger's reads counted about 18.3k or 14.2k instructions
// each (docs/gating.md, "Simulation mode"). Badger's
// block cache hands each read's cache updates to two goroutines
// (ristretto's set buffer,
// and batches of 64 recorded reads on a channel of 3 that drops what does
// not fit); a yield at least every 64 point reads lets both keep up, so
// none of that work is dropped or put off. A scan reads several blocks,
// so scans yield after each one (a yield is a few hundred instructions, a
// scan 77,000 or more).
const (
	simYieldReads = 64
	simYieldScans = 1
)

// stop dumps the window's counters.
func (w simWindow) stop() {
	if w.reason != nil {
		valgrind.DumpStatsAt(w.reason)
		valgrind.StopInstrumentation()
		runtime.MemProfileRate = w.memProfileRate
		debug.SetGCPercent(int(w.gcPercent))
		debug.SetMemoryLimit(w.memLim)
	}
}

// TimeInParts runs body with b's timer stopped, inside one callgrind
// window that counts only between each start and stop body calls: for a
// leaf whose ops time a part of their work (populate's write interval,
// overwrite's last pass), start and stop around each timed part.
func TimeInParts(b *testing.B, body func(start, stop func())) {
	b.StopTimer()
	sim := startSim(b)
	sim.pause()
	body(func() { sim.resume(); b.StartTimer() }, func() { b.StopTimer(); sim.pause() })
	sim.stop()
}
