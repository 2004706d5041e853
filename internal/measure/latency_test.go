package measure

import (
	"bufio"
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// within reports whether got is within frac of want.
func within(got, want int64, frac float64) bool {
	return math.Abs(float64(got-want)) <= frac*float64(want)
}

func TestRecorderInjectedDelays(t *testing.T) {
	r := NewRecorder()
	for range 99 {
		r.Record(100 * time.Microsecond)
	}
	r.Record(10 * time.Millisecond)

	if r.Count() != 100 {
		t.Fatalf("count %d, want 100", r.Count())
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 100 * time.Microsecond},
		{99, 100 * time.Microsecond}, // rank 99 of 100 is still a 100µs value
		{99.9, 10 * time.Millisecond},
		{100, 10 * time.Millisecond},
	} {
		if got := r.Percentile(c.p); !within(got, int64(c.want), 0.01) {
			t.Errorf("p%v = %d ns, want %v within 1%%", c.p, got, c.want)
		}
	}
	if r.Max() != int64(10*time.Millisecond) || r.Min() != int64(100*time.Microsecond) {
		t.Errorf("max %d min %d, want exact 10ms and 100µs", r.Max(), r.Min())
	}
	if m := r.Histogram().Mean(); !within(int64(m), int64(199*time.Microsecond), 0.01) {
		t.Errorf("mean %v ns, want ~199µs", m)
	}
}

// exactPercentile is the order statistic HdrHistogram's percentile picks:
// rank round(p/100*n), clamped to [1, n].
func exactPercentile(sorted []int64, p float64) int64 {
	n := len(sorted)
	rank := int(p/100*float64(n) + 0.5)
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

func TestRecorderBusyWaitDurations(t *testing.T) {
	// Real measured durations: busy-wait (no sleep, so no timer slack) for
	// 20µs most of the time and 1ms twice, timing each with time.Now.
	const n = 300
	r := NewRecorder()
	var exact []int64
	for i := range n {
		target := 20 * time.Microsecond
		if i%150 == 149 {
			target = time.Millisecond
		}
		start := time.Now()
		for time.Since(start) < target {
		}
		d := time.Since(start)
		if d < target {
			t.Fatalf("busy-wait of %v measured %v", target, d)
		}
		r.Record(d)
		exact = append(exact, int64(d))
	}
	slices.Sort(exact)
	for _, p := range []float64{50, 90, 99, 99.9} {
		want := exactPercentile(exact, p)
		if got := r.Percentile(p); !within(got, want, 0.01) {
			t.Errorf("p%v = %d ns, exact order statistic %d ns", p, got, want)
		}
	}
	if r.Max() != exact[n-1] || r.Min() != exact[0] {
		t.Errorf("max %d min %d, exact %d %d", r.Max(), r.Min(), exact[n-1], exact[0])
	}
	if r.Max() < int64(time.Millisecond) || r.Percentile(50) < int64(20*time.Microsecond) {
		t.Errorf("max %d p50 %d below what was waited", r.Max(), r.Percentile(50))
	}
	t.Logf("busy-wait 20µs: p50 %d ns, p99 %d ns, max %d ns", r.Percentile(50), r.Percentile(99), r.Max())
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := NewRecorder()
	var zero Recorder // lazily allocated by its first Record, outside the count
	zero.Record(time.Microsecond)
	d := time.Duration(1)
	allocs := testing.AllocsPerRun(10000, func() {
		d = d*7 + 13
		r.Record(d % time.Second)
		r.RecordNanos(int64(d % time.Millisecond))
		zero.Record(d % (2 * time.Hour))
	})
	if allocs != 0 {
		t.Fatalf("Record allocates %v times per call", allocs)
	}
	if r.Count() != 2*10001 { // AllocsPerRun runs the function once more to warm up
		t.Fatalf("count %d", r.Count())
	}
}

func TestMergeEqualsRecordingIntoOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b, all := NewRecorder(), NewRecorder(), NewRecorder()
	for i := range 20000 {
		// log-uniform from 1 ns to ~100 s
		v := int64(math.Exp(rng.Float64() * math.Log(1e11)))
		if i%3 == 0 {
			a.RecordNanos(v)
		} else {
			b.RecordNanos(v)
		}
		all.RecordNanos(v)
	}
	var empty Recorder
	m := Merge(a, nil, &empty, b)
	if m.Count() != all.Count() || m.Count() != 20000 {
		t.Fatalf("merged count %d, one recorder %d", m.Count(), all.Count())
	}
	if !m.Histogram().Equals(all.Histogram()) {
		t.Fatal("merged histogram differs from recording everything into one")
	}
	if m.Max() != all.Max() || m.Min() != all.Min() || m.Histogram().Mean() != all.Histogram().Mean() {
		t.Fatalf("max/min/mean %d/%d/%v vs %d/%d/%v", m.Max(), m.Min(), m.Histogram().Mean(), all.Max(), all.Min(), all.Histogram().Mean())
	}
	for _, p := range []float64{0, 1, 10, 50, 90, 99, 99.9, 99.99, 100} {
		if m.Percentile(p) != all.Percentile(p) {
			t.Errorf("p%v: merged %d, one %d", p, m.Percentile(p), all.Percentile(p))
		}
	}
	// Merge does not disturb its inputs.
	if a.Count()+b.Count() != 20000 {
		t.Fatalf("inputs changed: %d + %d", a.Count(), b.Count())
	}
}

func TestRecorderClampsAndEmpty(t *testing.T) {
	var r Recorder
	if r.Count() != 0 || r.Percentile(50) != 0 || r.Max() != 0 || r.Min() != 0 {
		t.Fatal("empty recorder reports values")
	}
	r.ReportAll(func(float64, string) { t.Fatal("empty recorder emitted a metric") })
	r.RecordNanos(-5)
	r.Record(2 * time.Hour)
	r.Record(time.Microsecond)
	if r.Clamped() != 2 || r.Min() != 0 || r.Max() != LatencyHighest || r.Count() != 3 {
		t.Fatalf("clamped %d min %d max %d count %d", r.Clamped(), r.Min(), r.Max(), r.Count())
	}
	r.Reset()
	if r.Count() != 0 || r.Clamped() != 0 || r.Max() != 0 {
		t.Fatal("Reset kept values")
	}
}

func TestReportMetrics(t *testing.T) {
	r := NewRecorder()
	for i := int64(1); i <= 100000; i++ {
		r.RecordNanos(i * 1000) // 1µs .. 100ms, uniform
	}
	got := map[string]float64{}
	r.Report(func(v float64, unit string) { got[unit] = v })
	if len(got) != 3 {
		t.Fatalf("Report emitted %v", got)
	}
	want := map[string]float64{"p50-ns": 50e6, "p99-ns": 99e6, "p999-ns": 99.9e6}
	for unit, w := range want {
		if v, ok := got[unit]; !ok || math.Abs(v-w) > 0.01*w {
			t.Errorf("%s = %v, want ~%v", unit, v, w)
		}
	}
	clear(got)
	r.ReportAll(func(v float64, unit string) { got[unit] = v })
	want = map[string]float64{"p50-ns": 50e6, "p90-ns": 90e6, "p99-ns": 99e6, "p999-ns": 99.9e6, "p9999-ns": 99.99e6, "max-ns": 100e6}
	if len(got) != len(want) {
		t.Fatalf("ReportAll emitted %v", got)
	}
	for unit, w := range want {
		if v, ok := got[unit]; !ok || math.Abs(v-w) > 0.01*w {
			t.Errorf("%s = %v, want ~%v", unit, v, w)
		}
	}
	if got["max-ns"] != 100e6 {
		t.Errorf("max-ns %v, want exactly 1e8", got["max-ns"])
	}
	for p, name := range map[float64]string{50: "p50-ns", 99.5: "p995-ns", 99.999: "p99999-ns", 100: "max-ns", 0: "p0-ns"} {
		if MetricName(p) != name {
			t.Errorf("MetricName(%v) = %q, want %q", p, MetricName(p), name)
		}
	}
}

func TestWriteSpectrum(t *testing.T) {
	r := NewRecorder()
	for range 99 {
		r.Record(100 * time.Microsecond)
	}
	r.Record(10 * time.Millisecond)
	var buf bytes.Buffer
	if err := r.WriteSpectrum(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	s := bufio.NewScanner(strings.NewReader(text))
	var rows int
	var lastValue, lastPct float64
	var lastCount int64
	var footer string
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "#") {
			footer += line + "\n"
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			continue
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		c, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue // the header
		}
		if p < lastPct || c < lastCount || v < lastValue {
			t.Fatalf("spectrum not monotonic at %q", line)
		}
		rows++
		lastValue, lastPct, lastCount = v, p, c
	}
	if rows < 5 || lastPct != 1 || lastCount != 100 || !within(int64(lastValue), int64(10*time.Millisecond), 0.01) {
		t.Fatalf("%d rows, last %v at %v count %d:\n%s", rows, lastValue, lastPct, lastCount, text)
	}
	if !strings.Contains(footer, "Total count    =          100") {
		t.Fatalf("footer %q", footer)
	}
}

// TestTimestampCostIsTheMedianPerPair checks TimestampCost's arithmetic
// on runs of known length; what a pair costs on this machine is
// BenchmarkTimestampCost's to report.
func TestTimestampCostIsTheMedianPerPair(t *testing.T) {
	lengths := []time.Duration{700, 100, 300, 50000, 200, 400, 600} // one run interrupted
	calls := 0
	got := medianPerIteration(len(lengths), 100, func(n int) time.Duration {
		if n != 100 {
			t.Errorf("run of %d iterations, want 100", n)
		}
		calls++
		return lengths[calls-1] * 100
	})
	if calls != len(lengths) || got != 400 {
		t.Errorf("%d runs, median per iteration %v; want 7 and 400ns", calls, got)
	}
	if d := timestampRun(1000); d <= 0 {
		t.Errorf("1000 timestamp pairs took %v", d)
	}
}

func BenchmarkTimestampCost(b *testing.B) {
	var c time.Duration
	for b.Loop() {
		c = TimestampCost()
	}
	b.ReportMetric(float64(c.Nanoseconds()), "ns/now-pair")
}

func BenchmarkTimestamp(b *testing.B) {
	var sum time.Duration
	for b.Loop() {
		t := time.Now()
		sum += time.Since(t)
	}
	runtime.KeepAlive(sum)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/now-pair")
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder()
	d := time.Duration(1)
	for b.Loop() {
		d = d*7 + 13
		r.Record(d % time.Second)
	}
}

// Min is the smallest value recorded, exactly, in nanoseconds (0 if none).
func (r *Recorder) Min() int64 {
	if r.Count() == 0 {
		return 0
	}
	return r.min
}
