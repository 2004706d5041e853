package load

import (
	"testing"
	"time"
)

// TestOperationsQueuedAtTheEndAreRecorded: one worker at 1,000/s for
// 200 ms, and operation 180 stalls for 100 ms, so operations 181..199 are
// still queued when the window ends. Every one of them runs and is
// recorded, each late by at least what the stall left of its wait.
func TestOperationsQueuedAtTheEndAreRecorded(t *testing.T) {
	const (
		rate = 1000.0
		D    = 200 * time.Millisecond
		S    = 100 * time.Millisecond
		at   = 180
	)
	var slept time.Duration
	// The drain is generous, so that only the old stop at the window's end
	// could leave operations out, not a paused machine.
	res, err := Run(Config{Rate: rate, Duration: D, Workers: 1, Drain: 10 * time.Second}, stallOp(at, S, &slept))
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	if res.Scheduled != n || res.Done != n {
		t.Fatalf("scheduled %d, done %d; want %d of each", res.Scheduled, res.Done, n)
	}
	if c := res.Latency.Count(); c != n {
		t.Errorf("latency histogram holds %d operations, want %d", c, n)
	}
	if m := time.Duration(res.Latency.Max()); m < slept {
		t.Errorf("max latency %v, want at least the stall %v", m, slept)
	}
	// Operation at+k is due k ms after the stall began and waits for its
	// end: at least S-k. The slowest 10% are 180..199, so p95 falls among
	// them and is at least S-19ms.
	if p := time.Duration(res.Latency.Percentile(95)); p < S-19*time.Millisecond {
		t.Errorf("p95 %v, want at least %v: the operations queued behind the stall are missing", p, S-19*time.Millisecond)
	}
	if res.Elapsed < at*time.Millisecond+slept {
		t.Errorf("elapsed %v ends before the stall did", res.Elapsed)
	}
}
