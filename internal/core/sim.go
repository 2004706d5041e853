package core

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/valgrind"
)

// A timed loop under Valgrind is one callgrind window (benchstat/sim):
// counters zeroed where it starts and dumped where it ends, so a leaf's
// instructions exclude its setup, the fixture's warm-up and every other
// leaf. docs/gating.md, "Simulation mode", says why each step below is
// taken and what it measured.

// underValgrind is read once: outside Valgrind a window costs one branch
// at its start and one at its end, nothing inside the loop.
var underValgrind = valgrind.Running()

// SimPace is how a warm leaf's timed loop runs under Valgrind: the
// operations of its untimed warm-up pass (a warm runtime: a type
// assertion's cache fills at random) and how often it yields (so an
// engine's background goroutines run at the same points in every run).
// Go's b.N=1 probe is never warmed: its count is never reported.
type SimPace struct{ Warm, Yield int }

// The paces of point reads (64 a yield: Badger's block cache hands every
// 64 recorded reads to a goroutine), of range scans (each reads several
// blocks), and of full scans, which take each of their paths so many
// times over that they need neither a warm-up pass nor yields.
var (
	SimReads     = SimPace{Warm: 10_000, Yield: 64}
	SimScans     = SimPace{Warm: 200, Yield: 1}
	SimFullScans = SimPace{}
)

const (
	// simSettle is how long a window waits, uncounted, for background
	// goroutines to drain what came before it.
	simSettle = 50 * time.Millisecond
	// simHeadroom is how much a window may allocate before the collector,
	// off inside it, runs anyway: a guard for windows far larger than the
	// gate's, not a setting that shapes a count.
	simHeadroom = 2 << 30
)

// simWindow is one window's state, to restore at its end.
type simWindow struct {
	reason            []byte
	gcPercent, memLim int64
	memProfileRate    int
}

// startSim opens b's window; call it right after b.ResetTimer (or
// StartTimer) and end it with stop right before b.StopTimer. It starts
// from a settled process (every free page returned to the OS, 50 ms for
// background goroutines), with no collection and no allocation sampling
// inside the window.
func startSim(b *testing.B) simWindow {
	if !underValgrind {
		return simWindow{}
	}
	r := valgrind.WindowReason(b.Name(), b.N) // before the zero: its allocation is not counted
	debug.FreeOSMemory()
	time.Sleep(simSettle)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := simWindow{reason: r, gcPercent: int64(debug.SetGCPercent(-1))}
	w.memLim = debug.SetMemoryLimit(int64(ms.HeapAlloc) + simHeadroom)
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

func (w simWindow) resume() {
	if w.reason != nil {
		valgrind.StartInstrumentation()
	}
}

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
