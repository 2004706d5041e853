package summary

import (
	"strings"
	"testing"
)

// TestSchedMarkOnTheCloseCell: of two engines' p99 at 16 threads, the one
// whose scheduler p99 is close to it (Bolt: 1.0 µs against 0.6 µs) is
// marked and the one far below it (Pebble: 500 µs against 0.3 µs) is not;
// nor is any cell at 2 threads (Bolt's scheduler p99 far above its op's:
// 1.1 µs against 30 µs), nor an ops/s cell; the note is printed once.
func TestSchedMarkOnTheCloseCell(t *testing.T) {
	in := `cpus: 2
BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=100%/threads=2-2 1000 1 ns/op 900000 ops/s 1100 p99-ns 30000 sched-p99-ns
BenchmarkReadRandomBolt/valsz=1024/cache=warm/hit=100%/threads=16-2 1000 1 ns/op 900000 ops/s 1000 p99-ns 600 sched-p99-ns
BenchmarkReadRandomPebble/valsz=1024/cache=warm/hit=100%/threads=2-2 1000 1 ns/op 300000 ops/s 60000 p99-ns 350 sched-p99-ns
BenchmarkReadRandomPebble/valsz=1024/cache=warm/hit=100%/threads=16-2 1000 1 ns/op 300000 ops/s 500000 p99-ns 300 sched-p99-ns
`
	s := summaryOf(t, in)
	var rows []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, SchedMark) && !strings.Contains(l, SchedNote) {
			rows = append(rows, strings.TrimSpace(l))
		}
	}
	if len(rows) != 1 {
		t.Fatalf("marked lines %q, want one:\n%s", rows, s)
	}
	cells := splitCells(rows[0])
	// The label, then Bolt, then Pebble.
	if want := []string{"p99 µs threads=16", "1.00" + SchedMark, "500"}; strings.Join(cells, "|") != strings.Join(want, "|") {
		t.Errorf("marked row %q, want %q:\n%s", cells, want, s)
	}
	if n := strings.Count(s, SchedNote); n != 1 {
		t.Errorf("note printed %d times, want once:\n%s", n, s)
	}

	// With Bolt's scheduler p99 below half its op's, nothing is marked
	// and no note is printed.
	far := strings.ReplaceAll(in, "1000 p99-ns 600 sched-p99-ns", "1000 p99-ns 400 sched-p99-ns")
	if s := summaryOf(t, far); strings.Contains(s, SchedMark) || strings.Contains(s, SchedNote) {
		t.Errorf("a scheduler p99 below half the op's is marked:\n%s", s)
	}
}

// TestSchedClose: the rule's edges are half and twice the op's p99,
// inclusive.
func TestSchedClose(t *testing.T) {
	for _, tc := range []struct {
		sched, op float64
		want      bool
	}{{500, 1000, true}, {499, 1000, false}, {2000, 1000, true}, {2001, 1000, false}, {0, 0, false}} {
		if got := schedClose(tc.sched, tc.op); got != tc.want {
			t.Errorf("sched %v, op %v: %v, want %v", tc.sched, tc.op, got, tc.want)
		}
	}
}
