package core

import (
	"math"
	"testing"
)

func TestSchedPercentile(t *testing.T) {
	prev := schedSample{counts: []uint64{5, 5, 5, 5}, buckets: []float64{0, 1e-6, 1e-5, 1e-4, math.Inf(1)}}
	now := schedSample{counts: []uint64{5, 95, 9, 6}, buckets: prev.buckets}
	// 95 waits since prev: 90 in (1µs, 10µs], 4 in (10µs, 100µs], 1 above
	// 100µs (the last bucket, unbounded: reported at its lower edge).
	for p, want := range map[float64]float64{50: 1e4, 90: 1e4, 95: 1e5, 99: 1e5, 100: 1e5} {
		if got := now.Percentile(prev, p); got != want {
			t.Errorf("p%v: %v ns, want %v", p, got, want)
		}
	}
	if got := prev.Percentile(prev, 99); !math.IsNaN(got) {
		t.Errorf("nothing waited: %v, want NaN", got)
	}
	if s := sampleSched(); len(s.counts) == 0 || len(s.buckets) != len(s.counts)+1 {
		t.Errorf("the runtime's histogram: %d counts, %d buckets", len(s.counts), len(s.buckets))
	}
}
