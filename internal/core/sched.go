package core

import (
	"math"
	"runtime/metrics"
	"testing"
)

// The Go scheduler's own wait: how long goroutines sat runnable before
// they ran (runtime/metrics /sched/latencies:seconds), over a leaf's timed
// window. With more goroutines than CPUs a read's tail can be this wait
// rather than the engine's; a leaf with more than one thread reports its
// p99 beside its own (sched-p99-ns) so a reader can tell them apart.

const schedMetric = "/sched/latencies:seconds"

// schedSample is the scheduler's latency histogram at one moment.
type schedSample struct {
	counts  []uint64
	buckets []float64
}

// sampleSched reads the histogram now (it allocates: call it outside
// timed loops).
func sampleSched() schedSample {
	s := []metrics.Sample{{Name: schedMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return schedSample{}
	}
	h := s[0].Value.Float64Histogram()
	return schedSample{counts: append([]uint64(nil), h.Counts...), buckets: h.Buckets}
}

// Percentile is the p-th percentile (0 to 100), in nanoseconds, of the
// waits that began between prev and s: the upper edge of the histogram's
// bucket that holds it (its buckets are a few per power of two). NaN when
// nothing waited.
func (s schedSample) Percentile(prev schedSample, p float64) float64 {
	if len(s.counts) == 0 || len(prev.counts) != len(s.counts) {
		return math.NaN()
	}
	var total uint64
	for i, c := range s.counts {
		total += c - prev.counts[i]
	}
	if total == 0 {
		return math.NaN()
	}
	want := uint64(math.Ceil(p / 100 * float64(total)))
	var seen uint64
	for i, c := range s.counts {
		if seen += c - prev.counts[i]; seen >= want {
			edge := s.buckets[i+1]
			if math.IsInf(edge, 1) {
				edge = s.buckets[i]
			}
			return edge * 1e9
		}
	}
	return math.NaN()
}

// reportSched reports sched-p99-ns over [prev, now] for a leaf of more
// than one thread.
func reportSched(b *testing.B, threads int, prev schedSample) {
	if threads < 2 {
		return
	}
	if v := sampleSched().Percentile(prev, 99); !math.IsNaN(v) {
		b.ReportMetric(v, "sched-p99-ns")
	}
}
