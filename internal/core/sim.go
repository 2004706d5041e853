package core

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/valgrind"
)

// A timed loop under Valgrind is one callgrind window (benchstat/sim):
// counters zeroed at its start and dumped at its end, so a leaf's count
// excludes its setup and warm-up. docs/gating.md, "Simulation mode", says
// why each step below is taken.

// underValgrind is read once: outside Valgrind a window costs a branch at
// each end.
var underValgrind = valgrind.Running()

// SimPace is how a warm leaf's timed loop runs under Valgrind: the
// operations of its untimed warm-up pass (a type assertion's cache fills
// at random) and how often it yields (so background goroutines run at the
// same points every run). Go's b.N=1 probe is never warmed.
type SimPace struct{ Warm, Yield int }

// The paces of point reads (Badger's block cache hands every 64 recorded
// reads to a goroutine), range scans, and full scans, which take each
// path so often they need neither warm-up nor yields.
var (
	SimReads     = SimPace{Warm: 10_000, Yield: 64}
	SimScans     = SimPace{Warm: 200, Yield: 1}
	SimFullScans = SimPace{}
)

const (
	// simSettle is how long a window waits, uncounted, for background
	// goroutines to drain what came before it.
	simSettle = 50 * time.Millisecond
	// simHeadroom is what a window may allocate before the collector, off
	// inside it, runs anyway: a guard for windows far beyond the gate's.
	simHeadroom = 2 << 30
)

// simWindow is one window's state, to restore at its end.
type simWindow struct {
	reason            []byte
	gcPercent, memLim int64
	memProfileRate    int
}

// startSim opens b's window right after b.ResetTimer (or StartTimer);
// stop ends it right before b.StopTimer. It starts from a settled process
// (free pages returned, simSettle), without collection or allocation
// sampling inside.
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

// pause stops counting, keeping the counts, until resume.
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

// TimeInParts runs body with b's timer stopped, in one callgrind window
// that counts only between each start and stop body calls: for a leaf
// that times a part of its work (populate's write interval).
func TimeInParts(b *testing.B, body func(start, stop func())) {
	b.StopTimer()
	sim := startSim(b)
	sim.pause()
	body(func() { sim.resume(); b.StartTimer() }, func() { b.StopTimer(); sim.pause() })
	sim.stop()
}
