package load

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/measure"
)

// stallOp does nothing, except that operation at sleeps for stall once and
// reports how long it really slept.
func stallOp(at uint64, stall time.Duration, slept *time.Duration) Op {
	return func(_ int, seq uint64) error {
		if seq == at {
			t := time.Now()
			time.Sleep(stall)
			*slept = time.Since(t)
		}
		return nil
	}
}

// checkStall checks a stall run against the analytic corrected
// percentiles and returns what does not match. Every operation due in the
// stall waits for its end, and a pause of the machine only adds to a
// latency: the analytic values are lower bounds however busy the machine
// is, less one operation's interval (the count is whole) and 1% for the
// histogram's rounding. The median, a few µs (the operations due outside
// the stall), is bounded at 10 ms: a latency counted from the run's start
// instead of the due time puts it at 500 ms, and a pause cannot move it
// there without delaying half the run's operations by 10 ms.
func checkStall(t *testing.T, res *Result, rate float64, D, slept time.Duration) []string {
	var bad []string
	want := int64(rate * D.Seconds())
	if res.Scheduled != want || res.Done != want || !res.Complete() {
		bad = append(bad, fmt.Sprintf("scheduled %d, done %d, unrun %d; want %d done", res.Scheduled, res.Done, res.Unrun, want))
	}
	s := float64(slept) // the stall as it really was (Sleep oversleeps a little)
	span := float64(D)
	for _, p := range []float64{95, 97.5, 99, 99.9, 99.99} {
		want := s - (1-p/100)*span
		got := float64(res.Latency.Percentile(p))
		t.Logf("p%v: corrected %v, analytic %v, uncorrected %v", p, time.Duration(got), time.Duration(want), time.Duration(res.Service.Percentile(p)))
		if got < 0.99*(want-float64(time.Second)/rate) {
			bad = append(bad, fmt.Sprintf("corrected p%v = %v, want at least %v", p, time.Duration(got), time.Duration(want)))
		}
	}
	if p50 := time.Duration(res.Latency.Percentile(50)); p50 > 10*time.Millisecond {
		bad = append(bad, fmt.Sprintf("corrected p50 = %v: operations the stall did not delay are charged too", p50))
	}
	if got := time.Duration(res.Latency.Max()); got < slept {
		bad = append(bad, fmt.Sprintf("corrected max = %v, want at least the stall %v", got, slept))
	}
	return bad
}

// TestStallIsChargedToEveryDelayedOperation checks the coordinated-omission
// correction against its analytic values. One worker runs no-op operations
// at rate R for D; one of them stalls for S. Every operation due during the
// stall waits for its end, so latencies spread evenly over (0, S]: the
// fraction of operations slower than y is (S-y)/D, and percentile p is
// S - (1-p)·D. A closed-loop timer sees one slow operation in thousands
// and reports a p99 of microseconds.
func TestStallIsChargedToEveryDelayedOperation(t *testing.T) {
	const (
		rate = 5000.0
		D    = time.Second
		S    = 200 * time.Millisecond
	)
	var slept time.Duration
	res, err := Run(Config{Rate: rate, Duration: D, Workers: 1, Drain: 10 * time.Second}, stallOp(uint64(rate/2), S, &slept))
	if err != nil {
		t.Fatal(err)
	}
	bad := checkStall(t, res, rate, D, slept)
	// Timed from each operation's actual start, as a closed loop times
	// it, the same run holds the stall as one slow sample.
	bad = append(bad, oneSlowSample("uncorrected", res.Service, S, slept)...)
	// A true closed loop over the same operations: the same.
	cl, err := Closed(Config{Duration: D, Workers: 1}, stallOp(1000, S, &slept))
	if err != nil {
		t.Fatal(err)
	}
	bad = append(bad, oneSlowSample("closed-loop", cl.Latency, S, slept)...)
	for _, msg := range bad {
		t.Error(msg)
	}
}

// oneSlowSample checks that a stall of S shows in r as one sample, not
// as the spread of latencies the corrected histogram holds. It is an
// order-of-magnitude check: normally one sample is at S/4 or more (the
// stall), and the bound is 10, which a timer started at the due time
// breaks by 75× (about 750 samples: every operation due in the stall's
// first three quarters) and the machine only by pausing this process for
// S/4 (50 ms) nine more times in one second.
func oneSlowSample(what string, r *measure.Recorder, S, slept time.Duration) []string {
	var bad []string
	if n := countAtLeast(r, int64(S/4)); n > 10 {
		bad = append(bad, fmt.Sprintf("%s: %d samples of %v or more; want the stall alone", what, n, S/4))
	}
	if m := time.Duration(r.Max()); m < slept {
		bad = append(bad, fmt.Sprintf("%s max = %v, want the stall %v", what, m, slept))
	}
	return bad
}

// countAtLeast is how many samples of r are at least v (to the
// histogram's precision).
func countAtLeast(r *measure.Recorder, v int64) int64 {
	n := int64(0)
	for _, b := range r.Histogram().Distribution() {
		if b.To > v {
			n += b.Count
		}
	}
	return n
}

func TestEveryOperationRunsOnce(t *testing.T) {
	const n = 4000
	var seen [n]atomic.Int32
	var workers [3]atomic.Int64
	// A generous drain: a paused machine must not leave any unrun.
	res, err := Run(Config{Rate: 20000, Duration: n * time.Second / 20000, Workers: 3, Drain: 10 * time.Second}, func(w int, seq uint64) error {
		seen[seq].Add(1)
		workers[w].Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scheduled != n || res.Done != n || res.Unrun != 0 {
		t.Fatalf("scheduled %d, done %d, unrun %d; want %d done", res.Scheduled, res.Done, res.Unrun, n)
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("operation %d ran %d times", i, c)
		}
	}
	for w := range workers {
		if workers[w].Load() == 0 {
			t.Errorf("worker %d ran nothing", w)
		}
	}
	if res.Latency.Count() != res.Done || res.Service.Count() != res.Done {
		t.Errorf("recorded %d and %d latencies, want %d", res.Latency.Count(), res.Service.Count(), res.Done)
	}
}

// TestOverloadShowsAsAchievedBelowTarget: operations that take four times
// their interval on one worker reach a quarter of the rate. The run stops
// Drain after its window with about half its operations unrun, and
// records each of those at its wait until the stop.
func TestOverloadShowsAsAchievedBelowTarget(t *testing.T) {
	const (
		D     = 500 * time.Millisecond
		drain = 250 * time.Millisecond
	)
	res, err := Run(Config{Rate: 250, Duration: D, Workers: 1, Drain: drain}, func(int, uint64) error {
		time.Sleep(16 * time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Left to work off its backlog, this engine would run 2 s and finish
	// all 125; the counts below show the stop without timing the run.
	if res.Achieved() > 0.5*res.Target {
		t.Errorf("achieved %.0f of %.0f ops/s: an overload must not pass", res.Achieved(), res.Target)
	}
	// At most one operation per 16 ms starts before the stop at 750 ms
	// (a sleep is never short, so a slow machine only lowers Done).
	if res.Scheduled != 125 || res.Done > 48 || res.Done+res.Unrun != res.Scheduled || res.Complete() {
		t.Errorf("scheduled %d, done %d, unrun %d", res.Scheduled, res.Done, res.Unrun)
	}
	if res.Latency.Count() != res.Scheduled || res.Service.Count() != res.Done {
		t.Errorf("latencies %d, service times %d; want every scheduled and every done operation", res.Latency.Count(), res.Service.Count())
	}
	// The backlog grows through the window: the last operations waited
	// most of it. An unrun operation waited at least the drain.
	if m := time.Duration(res.Latency.Max()); m < D/2 {
		t.Errorf("corrected max %v; queueing must show", m)
	}
	if p := time.Duration(res.Latency.Percentile(100*(1-float64(res.Unrun)/float64(res.Scheduled)) + 0.5)); p < drain {
		t.Errorf("the slowest %d latencies start at %v, want unrun operations at %v or more", res.Unrun, p, drain)
	}
	if res.Elapsed < D+drain {
		t.Errorf("elapsed %v ends before the stop at %v", res.Elapsed, D+drain)
	}
}

func TestErrorStopsTheRun(t *testing.T) {
	boom := errors.New("boom")
	start := time.Now()
	_, err := Run(Config{Rate: 1000, Duration: 10 * time.Second, Workers: 2}, func(_ int, seq uint64) error {
		if seq == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	// An order-of-magnitude check: the error comes 10 ms in, and a run
	// that went on would take its whole 10 s, ten times the bound.
	if time.Since(start) > time.Second {
		t.Fatal("the run went on after an error")
	}
	if _, err := Run(Config{Rate: 0, Duration: time.Second, Workers: 1}, nil); err == nil {
		t.Error("rate 0 accepted")
	}
	if _, err := Closed(Config{Duration: time.Second, Workers: 0}, nil); err == nil {
		t.Error("0 workers accepted")
	}
}

// TestLagIsTheGeneratorsOwn: Lag leaves out operations held back by an
// earlier one (here, the thousand due during a 200 ms stall), and no
// operation ever starts before its due time.
func TestLagIsTheGeneratorsOwn(t *testing.T) {
	const (
		rate = 5000.0
		D    = 500 * time.Millisecond
		S    = 200 * time.Millisecond
	)
	var slept time.Duration
	res, err := Run(Config{Rate: rate, Duration: D, Workers: 1, Drain: 10 * time.Second}, stallOp(100, S, &slept))
	if err != nil {
		t.Fatal(err)
	}
	// Operations 101 on, due before the stall ends, wait for it: at
	// least slept·rate - 1 of them, or all that are left.
	held := min(int64(slept.Seconds()*rate)-1, res.Scheduled-101)
	if n := res.Lag.Count(); n < 1 || n > res.Done-held {
		t.Errorf("lag recorded for %d of %d operations; at least %d were held back by the stall", n, res.Done, held)
	}
	if c := res.Lag.Clamped() + res.Latency.Clamped(); c != 0 {
		t.Errorf("%d operations started before they were due", c)
	}
}

// TestWaitUntilIsNeverEarly: in each of its waiting regimes (none, spin,
// nanosleep, time.Sleep) waitUntil returns at or after the due time.
func TestWaitUntilIsNeverEarly(t *testing.T) {
	for _, due := range []time.Duration{0, 20 * time.Microsecond, 200 * time.Microsecond, 3 * time.Millisecond} {
		start := time.Now()
		got := waitUntil(start, int64(due))
		if el := time.Since(start); got < int64(due) || el < due {
			t.Errorf("wait for %v returned at %v (%v elapsed)", due, time.Duration(got), el)
		}
	}
}

// BenchmarkGeneratorLag reports how late the generator starts operations
// nothing holds back (the error every corrected latency includes): on an
// idle machine a few µs at the median.
func BenchmarkGeneratorLag(b *testing.B) {
	var res *Result
	for b.Loop() {
		var err error
		res, err = Run(Config{Rate: 2000, Duration: 500 * time.Millisecond, Workers: 2}, func(int, uint64) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Lag.Percentile(50)), "lag-p50-ns")
	b.ReportMetric(float64(res.Lag.Percentile(99)), "lag-p99-ns")
}

// TestEveryWindowRunsItsFirstOperation: a window the clock reaches only
// after its hard stop (here a window of 1 ns, so any start is late) still
// runs its first operation, on each worker in a closed loop: a pause of
// the machine leaves a window that measured one operation, not none.
func TestEveryWindowRunsItsFirstOperation(t *testing.T) {
	nop := func(int, uint64) error { return nil }
	res, err := Run(Config{Rate: 1000, Duration: time.Nanosecond, Workers: 2}, nop)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scheduled != 1 || res.Done != 1 || !res.Complete() {
		t.Errorf("open loop: scheduled %d, done %d, unrun %d; want the first done", res.Scheduled, res.Done, res.Unrun)
	}
	cl, err := Closed(Config{Duration: time.Nanosecond, Workers: 3}, nop)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Done != 3 || cl.Latency.Count() != cl.Done {
		t.Errorf("closed loop: %d done, %d latencies; want one on each of 3 workers", cl.Done, cl.Latency.Count())
	}
}
