package measure

import (
	"strings"
	"testing"
	"time"
)

// A window of 1 s at 1,000 ops/s with nothing ending from 300 to 500 ms
// (two 100 ms intervals stalled) and one interval at half speed: the
// intervals count what ended in each, the stall figures see the two empty
// ones and no other, the p99 is of each interval's own latencies.
func TestIntervalsSeeAStall(t *testing.T) {
	start := timelineEpoch.Add(time.Second)
	a, b := NewTimeline(2000), NewTimeline(2000)
	for ms := 0; ms < 1000; ms++ {
		if ms >= 300 && ms < 500 {
			continue
		}
		tl := a
		if ms%2 == 1 {
			tl = b
		}
		lat := 100 * time.Microsecond
		if ms >= 700 && ms < 800 {
			if ms%2 == 1 {
				continue // half speed
			}
			lat = 5 * time.Millisecond
		}
		tl.Add(start.Add(time.Duration(ms)*time.Millisecond+500*time.Microsecond-lat), lat, 3)
	}
	iv, err := Intervals([]*Timeline{a, b}, start, start.Add(1050*time.Millisecond), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(iv) != 10 {
		t.Fatalf("%d intervals, want 10 whole ones (the last 50 ms left out)", len(iv))
	}
	for k, x := range iv {
		want := int64(100)
		switch {
		case k == 3 || k == 4:
			want = 0
		case k == 7:
			want = 50
		}
		if x.Commits != want || x.Ops != 3*want || x.Rate != float64(3*want)*10 {
			t.Errorf("interval %d: %d commits of %d ops at %.0f/s, want %d of 3 each", k, x.Commits, x.Ops, x.Rate, want)
		}
		if k == 7 && (x.P99 < 4_990_000 || x.P99 > 5_010_000) {
			t.Errorf("interval 7's p99 %d ns, want 5 ms", x.P99)
		}
		if k == 0 && (x.P99 < 99_000 || x.P99 > 101_000) {
			t.Errorf("interval 0's p99 %d ns, want 100 µs", x.P99)
		}
	}
	stalled, worst, ok := Stalls(iv)
	if !ok || stalled != 20 || worst != 0 {
		t.Errorf("stalls: %.1f%% of intervals, worst %.2f of the median (ok %v); want 20%% and 0", stalled, worst, ok)
	}
	var sb strings.Builder
	if err := WriteIntervals(&sb, "BenchmarkX/a=1", iv); err != nil || !strings.HasPrefix(sb.String(), "# BenchmarkX/a=1\nstart-s\tops/s\tp99-ns\n0.000\t3000\t") || strings.Count(sb.String(), "\n") != 12 {
		t.Errorf("written: %q (%v)", sb.String(), err)
	}
}

// A window too short to judge, or of too few operations an interval, is
// not judged; one whose operations did not fit the room made for them is
// an error.
func TestStallsNeedAWholeWindow(t *testing.T) {
	full := make([]Interval, MinIntervals)
	for i := range full {
		full[i].Commits, full[i].Ops = MinIntervalCommits, 1000*MinIntervalCommits
	}
	if _, _, ok := Stalls(full[1:]); ok {
		t.Error("a window of too few intervals was judged")
	}
	if _, _, ok := Stalls(full); !ok {
		t.Error("a window of enough intervals and operations was not judged")
	}
	full[0].Commits, full[1].Commits, full[2].Commits = MinIntervalCommits-1, MinIntervalCommits-1, MinIntervalCommits-1
	if _, _, ok := Stalls(full); ok {
		t.Error("a window of too few operations an interval was judged")
	}
	tl := NewTimeline(1)
	now := time.Now()
	tl.Add(now, time.Microsecond, 1)
	tl.Add(now, time.Microsecond, 1)
	if _, err := Intervals([]*Timeline{tl}, now, now.Add(time.Second), 100*time.Millisecond); err == nil {
		t.Error("an operation past the timeline's room was not an error")
	}
}

// Add allocates nothing: it runs inside the timed window.
func TestTimelineAddDoesNotAllocate(t *testing.T) {
	tl := NewTimeline(1000)
	now := time.Now()
	if n := testing.AllocsPerRun(500, func() { tl.Add(now, time.Microsecond, 1) }); n != 0 {
		t.Errorf("Add allocates %.1f times", n)
	}
}
