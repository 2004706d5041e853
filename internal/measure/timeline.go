package measure

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// A Timeline is one goroutine's commits in a timed window: when each ended,
// how long it took and how many operations it committed, in buffers sized
// before the window (Add allocates nothing). Combine them with Intervals.
type Timeline struct {
	end, ns, ops []int64 // end: nanoseconds since timelineEpoch
	dropped      int64   // commits past the buffers' capacity
}

// timelineEpoch is the origin of every Timeline's times in this process.
var timelineEpoch = time.Now()

// NewTimeline returns a Timeline with room for n commits.
func NewTimeline(n int) *Timeline {
	return &Timeline{end: make([]int64, 0, n), ns: make([]int64, 0, n), ops: make([]int64, 0, n)}
}

// Add records one commit of ops operations that started at t0 and took d.
func (tl *Timeline) Add(t0 time.Time, d time.Duration, ops int) {
	if len(tl.end) == cap(tl.end) {
		tl.dropped++
		return
	}
	tl.end = append(tl.end, int64(t0.Sub(timelineEpoch)+d))
	tl.ns = append(tl.ns, int64(d))
	tl.ops = append(tl.ops, int64(ops))
}

// Interval is one interval of a window: the commits that ended in it, their
// operations and rate, and the p99 of their latencies.
type Interval struct {
	Start, End time.Duration // from the window's start
	Commits    int64
	Ops        int64
	Rate       float64 // operations a second
	P99        int64   // ns; 0 with no commit
}

// Intervals cuts the window [start, end) into whole intervals of every (a
// shorter last piece left out) and counts the commits of tls that ended in
// each. It fails when a commit did not fit its Timeline (a false stall).
func Intervals(tls []*Timeline, start, end time.Time, every time.Duration) ([]Interval, error) {
	if every <= 0 {
		return nil, fmt.Errorf("interval %v: must be positive", every)
	}
	n := int(end.Sub(start) / every)
	out := make([]Interval, n)
	lats := make([][]int64, n)
	ops := make([]int64, n)
	from := int64(start.Sub(timelineEpoch))
	for _, tl := range tls {
		if tl.dropped > 0 {
			return nil, fmt.Errorf("timeline: %d operations past its room for %d", tl.dropped, cap(tl.end))
		}
		for i, e := range tl.end {
			if k := (e - from) / int64(every); e >= from && k < int64(n) {
				lats[k] = append(lats[k], tl.ns[i])
				ops[k] += tl.ops[i]
			}
		}
	}
	r := NewRecorder()
	for k := range out {
		out[k] = Interval{Start: time.Duration(k) * every, End: time.Duration(k+1) * every,
			Commits: int64(len(lats[k])), Ops: ops[k], Rate: float64(ops[k]) / every.Seconds()}
		r.Reset()
		for _, ns := range lats[k] {
			r.RecordNanos(ns)
		}
		out[k].P99 = r.Percentile(99) // 0 with no commit
	}
	return out, nil
}

// Stalls judges a window of at least MinIntervals intervals whose median
// interval holds at least MinIntervalCommits commits: with fewer, one commit
// more or less at an edge moves a rate by half or more; with 4, an interval
// below half the median holds at most one, a pause of a whole interval.
const (
	MinIntervals       = 5
	MinIntervalCommits = 4
)

// Stalls is how a window's rate held: stalled, the share (in %) of its
// intervals below half the median's rate, and worst, the lowest over the
// median; ok is false for a window it does not judge.
func Stalls(iv []Interval) (stalled, worst float64, ok bool) {
	if len(iv) < MinIntervals {
		return 0, 0, false
	}
	ops, commits := make([]int64, len(iv)), make([]int64, len(iv))
	for i, x := range iv {
		ops[i], commits[i] = x.Ops, x.Commits
	}
	median := func(v []int64) float64 {
		slices.Sort(v)
		m := len(v) / 2
		if len(v)%2 == 0 {
			return float64(v[m-1]+v[m]) / 2
		}
		return float64(v[m])
	}
	med := median(ops)
	if median(commits) < MinIntervalCommits || med == 0 {
		return 0, 0, false
	}
	below := 0
	for _, n := range ops {
		if float64(n) < med/2 {
			below++
		}
	}
	return 100 * float64(below) / float64(len(ops)), float64(ops[0]) / med, true
}

// WriteIntervals writes the intervals of benchmark name, tab-separated
// after a "# name" line and the columns' names: start in seconds,
// operations a second, p99 in nanoseconds.
func WriteIntervals(w io.Writer, name string, iv []Interval) error {
	if _, err := fmt.Fprintf(w, "# %s\nstart-s\tops/s\tp99-ns\n", name); err != nil {
		return err
	}
	for _, x := range iv {
		if _, err := fmt.Fprintf(w, "%.3f\t%.0f\t%d\n", x.Start.Seconds(), x.Rate, x.P99); err != nil {
			return err
		}
	}
	return nil
}
