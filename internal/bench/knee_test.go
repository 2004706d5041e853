package bench

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/load"
	"github.com/kvbench/kvbench/internal/measure"
)

// TestFindKnee runs the search against a synthetic engine that serves up
// to capacity operations per second, once stalling on a rate it can
// serve: the stall is retried, and the knee lands just under capacity.
func TestFindKnee(t *testing.T) {
	c := Default().Load
	c.KneeStart, c.KneeSteps, c.SLO = 1000, 6, 10*time.Millisecond
	const capacity = 45_000
	var tried []int
	trial := func(rate int) (*load.Result, error) {
		tried = append(tried, rate)
		lat := measure.NewRecorder()
		done := min(rate, capacity)
		p99 := time.Millisecond
		if len(tried) == 3 { // one stall of the machine at a rate it can serve
			p99 = time.Second
		}
		for i := 0; i < 100; i++ {
			lat.Record(p99)
		}
		return &load.Result{Target: float64(rate), Scheduled: int64(rate), Done: int64(done), Elapsed: time.Second, Latency: lat}, nil
	}
	knee, res, err := c.findKnee(trial, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	// Doubling: 1k 2k 4k(stall, retried) 4k 8k 16k 32k 64k(x2); then six
	// bisection steps between 32k and 64k.
	if knee > capacity || knee < capacity*95/100 || res == nil || res.Target != float64(knee) {
		t.Fatalf("knee %d (tried %v), want just under %d", knee, tried, capacity)
	}
	if tried[2] != tried[3] {
		t.Errorf("a stalled trial was not retried: %v", tried)
	}
}
