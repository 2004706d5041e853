package bench

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/load"
	"github.com/kvbench/kvbench/internal/measure"
)

// kneeResult is a synthetic trial at rate: done of scheduled operations
// completed over the window the schedule spans, recorded latencies all
// equal to p99, and unrun of them left unrun.
func kneeResult(rate int, scheduled, done, recorded, unrun int64, p99 time.Duration) *load.Result {
	lat := measure.NewRecorder()
	for i := int64(0); i < recorded; i++ {
		lat.Record(p99)
	}
	return &load.Result{Target: float64(rate), Scheduled: scheduled, Done: done, Unrun: unrun, Elapsed: time.Duration(float64(scheduled) / float64(rate) * float64(time.Second)), Latency: lat}
}

// TestFindKnee runs the search against a synthetic engine that serves up
// to capacity operations per second: the knee lands just under capacity,
// and every rate it passes was tried twice.
func TestFindKnee(t *testing.T) {
	c := Default().Load
	c.KneeStart, c.KneeSteps, c.SLO = 1000, 6, 10*time.Millisecond
	const capacity = 45_000
	tried := map[int]int{}
	trial := func(rate int) (*load.Result, error) {
		tried[rate]++
		p99 := time.Millisecond
		if rate > capacity {
			p99 = time.Second
		}
		return kneeResult(rate, 100, 100, 100, 0, p99), nil
	}
	knee, res, err := c.findKnee(trial, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if knee > capacity || knee < capacity*95/100 || res == nil || res.Target != float64(knee) {
		t.Fatalf("knee %d (tried %v), want just under %d", knee, tried, capacity)
	}
	for rate, n := range tried {
		if want := map[bool]int{true: 2, false: 1}[rate <= capacity]; n != want {
			t.Errorf("rate %d tried %d times, want %d", rate, n, want)
		}
	}
}

// TestKneeNeedsEveryTrial: an engine whose trials alternate between
// holding 60k/s and only 30k/s (compaction in one window, not the next)
// has a knee under 30k: taking the better of two trials put it near 60k.
// A stall at a rate it can serve lowers the knee, never raises it.
func TestKneeNeedsEveryTrial(t *testing.T) {
	c := Default().Load
	c.KneeStart, c.KneeSteps, c.SLO = 1000, 8, 10*time.Millisecond
	const lucky, unlucky = 60_000, 30_000
	n := 0
	trial := func(rate int) (*load.Result, error) {
		n++
		capacity := unlucky
		if n%2 == 1 {
			capacity = lucky
		}
		p99 := time.Millisecond
		if rate > capacity {
			p99 = 50 * time.Millisecond
		}
		return kneeResult(rate, 100, 100, 100, 0, p99), nil
	}
	knee, _, err := c.findKnee(trial, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if knee > unlucky || knee < unlucky*95/100 {
		t.Errorf("knee %d, want just under %d, the rate held in every trial", knee, unlucky)
	}

	n = 0
	stalled := 0
	knee, _, err = c.findKnee(func(rate int) (*load.Result, error) {
		n++
		p99 := time.Millisecond
		if n == 6 { // the machine pauses in the second trial at 4,000/s
			stalled, p99 = rate, time.Second
		}
		if rate > unlucky {
			p99 = time.Second
		}
		return kneeResult(rate, 100, 100, 100, 0, p99), nil
	}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if stalled == 0 || knee >= stalled {
		t.Errorf("knee %d with a stall at %d ops/s: a stall must fail its rate", knee, stalled)
	}
}

// TestKneeFailsMissingOperations: a trial in which some operations due in
// the window are missing from the histogram, or were left unrun, fails
// however good the p99 of the rest, even when the rest achieved 99.5% of
// the target (which the rule "achieved >= 99% and p99 <= SLO" passed).
func TestKneeFailsMissingOperations(t *testing.T) {
	c := Default().Load
	c.SLO = 10 * time.Millisecond
	for _, tc := range []struct {
		name                           string
		scheduled, done, recorded, unr int64
		p99                            time.Duration
		want                           bool
	}{
		{"complete", 1000, 1000, 1000, 0, time.Millisecond, true},
		{"complete over the slo", 1000, 1000, 1000, 0, 11 * time.Millisecond, false},
		{"0.5% never recorded", 1000, 995, 995, 0, time.Millisecond, false},
		{"0.5% unrun at the hard stop", 1000, 995, 1000, 5, time.Millisecond, false},
	} {
		res := kneeResult(1000, tc.scheduled, tc.done, tc.recorded, tc.unr, tc.p99)
		if got := c.sustained(res); got != tc.want {
			t.Errorf("%s: sustained %v, want %v (achieved %.0f of %.0f)", tc.name, got, tc.want, res.Achieved(), res.Target)
		}
	}

	// Past capacity the synthetic engine silently drops 0.5% of its
	// operations: the knee stops at capacity.
	c.KneeStart, c.KneeSteps = 1000, 6
	const capacity = 20_000
	knee, _, err := c.findKnee(func(rate int) (*load.Result, error) {
		done := int64(1000)
		if rate > capacity {
			done = 995
		}
		return kneeResult(rate, 1000, done, done, 0, time.Millisecond), nil
	}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if knee > capacity || knee < capacity*95/100 {
		t.Errorf("knee %d, want just under %d", knee, capacity)
	}
}
