package bench

import (
	"testing"

	"github.com/kvbench/kvbench/internal/valgrind"
)

// underValgrind is read once: outside Valgrind a timed window costs one
// branch at its start and one at its end, nothing inside the loop.
var underValgrind = valgrind.Running()

// SimWindow marks one timed loop for callgrind (benchstat/sim): its
// counters are zeroed where the loop starts and dumped where it ends, in
// a dump described by valgrind.WindowReason, so a leaf's instructions
// exclude its setup, the fixture's warm-up and every other leaf.
type SimWindow struct{ reason []byte }

// StartSim opens b's window; call it right after b.ResetTimer (or
// StartTimer) and end it with Stop right before b.StopTimer.
func StartSim(b *testing.B) SimWindow {
	if !underValgrind {
		return SimWindow{}
	}
	// Built before the zero, so the name's allocation is not counted.
	r := valgrind.WindowReason(b.Name(), b.N)
	valgrind.StartInstrumentation()
	valgrind.ZeroStats()
	return SimWindow{r}
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

// Stop dumps the window's counters.
func (w SimWindow) Stop() {
	if w.reason != nil {
		valgrind.DumpStatsAt(w.reason)
		valgrind.StopInstrumentation()
	}
}
