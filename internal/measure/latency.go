package measure

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histogram geometry: nanosecond values from 1 ns to 1 hour with 3
// significant figures, so any recorded value is reported within 0.1%.
const (
	LatencyLowest  = 1                // ns
	LatencyHighest = int64(time.Hour) // ns; larger values are clamped to it
	LatencySigFigs = 3                // significant decimal digits

	spectrumTicks = 5       // WriteSpectrum ticks per half distance
	timestampLoop = 1 << 15 // iterations per TimestampCost run
	timestampRuns = 7       // runs whose median TimestampCost returns
)

// Recorder is a latency histogram for one goroutine of a benchmark loop,
// without a lock: give each goroutine its own and Merge them after the loop.
// Record does not allocate; the zero value allocates its histogram (about
// 260 KiB) on the first Record, NewRecorder up front.
type Recorder struct {
	h        *hdrhistogram.Histogram
	min, max int64 // exact extremes of the recorded (clamped) values
	clamped  int64 // values outside [0, LatencyHighest] that were clamped
}

// NewRecorder returns an empty Recorder with its histogram allocated.
func NewRecorder() *Recorder {
	r := &Recorder{}
	r.init()
	return r
}

func (r *Recorder) init() {
	r.h = hdrhistogram.New(LatencyLowest, LatencyHighest, LatencySigFigs)
	r.min, r.max = math.MaxInt64, 0
}

// Record adds one latency.
func (r *Recorder) Record(d time.Duration) { r.RecordNanos(int64(d)) }

// RecordNanos adds one latency given in nanoseconds. Negative values count as
// 0 and values above LatencyHighest as LatencyHighest; Clamped counts both.
func (r *Recorder) RecordNanos(ns int64) {
	if r.h == nil {
		r.init()
	}
	if c := min(max(ns, 0), LatencyHighest); c != ns {
		ns = c
		r.clamped++
	}
	r.min, r.max = min(r.min, ns), max(r.max, ns)
	// Cannot fail: ns is within the histogram's range.
	_ = r.h.RecordValue(ns)
}

// Merge returns a new Recorder holding every value recorded by rs (nil
// entries are skipped). Call it after the goroutines have stopped recording.
func Merge(rs ...*Recorder) *Recorder {
	m := NewRecorder()
	for _, r := range rs {
		if r == nil || r.h == nil {
			continue
		}
		m.h.Merge(r.h)
		m.min, m.max = min(m.min, r.min), max(m.max, r.max)
		m.clamped += r.clamped
	}
	return m
}

// Count is the number of values recorded.
func (r *Recorder) Count() int64 {
	if r.h == nil {
		return 0
	}
	return r.h.TotalCount()
}

// Clamped is how many recorded values were outside [0, LatencyHighest].
func (r *Recorder) Clamped() int64 { return r.clamped }

// Percentile returns the value in nanoseconds at percentile p (in percent:
// 50 is the median, 100 the maximum): the upper end of the bucket holding
// the value of rank round(p/100*Count()), at most 0.1% above it; 0 when
// nothing was recorded.
func (r *Recorder) Percentile(p float64) int64 {
	if r.Count() == 0 {
		return 0
	}
	if p >= 100 {
		return r.max
	}
	// The exact extremes bound the bucket's ends.
	return max(r.min, min(r.h.ValueAtPercentile(p), r.max))
}

// Max is the largest value recorded, exactly, in nanoseconds (0 if none).
func (r *Recorder) Max() int64 { return r.Percentile(100) }

// Reset forgets every recorded value, keeping the allocated histogram.
func (r *Recorder) Reset() {
	if r.h != nil {
		r.h.Reset()
		r.min, r.max, r.clamped = math.MaxInt64, 0, 0
	}
}

// Histogram exposes the underlying histogram; do not record into it (Max
// would not see those values).
func (r *Recorder) Histogram() *hdrhistogram.Histogram {
	if r.h == nil {
		r.init()
	}
	return r.h
}

// ReportPercentilesAll are the percentiles ReportAll emits.
var ReportPercentilesAll = []float64{50, 90, 99, 99.9, 99.99, 100}

// Report emits p50-ns, p99-ns and p999-ns through report, such as
// (*testing.B).ReportMetric; nothing when nothing was recorded.
func (r *Recorder) Report(report func(value float64, unit string)) {
	r.ReportPercentiles(report, 50, 99, 99.9)
}

// ReportAll emits p50-ns, p90-ns, p99-ns, p999-ns, p9999-ns and max-ns.
func (r *Recorder) ReportAll(report func(value float64, unit string)) {
	r.ReportPercentiles(report, ReportPercentilesAll...)
}

// ReportPercentiles emits one metric per percentile ps (in percent), named
// by MetricName. Nothing is emitted when nothing was recorded.
func (r *Recorder) ReportPercentiles(report func(value float64, unit string), ps ...float64) {
	if r.Count() == 0 {
		return
	}
	for _, p := range ps {
		report(float64(r.Percentile(p)), MetricName(p))
	}
}

// MetricName is the unit of percentile p (in percent): p's digits without
// the point, "p50-ns", "p999-ns"; 100 or more is "max-ns".
func MetricName(p float64) string {
	if p >= 100 {
		return "max-ns"
	}
	s := strconv.FormatFloat(p, 'f', -1, 64)
	return "p" + strings.Replace(s, ".", "", 1) + "-ns"
}

// WriteSpectrum writes HdrHistogram's percentile distribution text, the
// format its plotters read, with values in nanoseconds.
func (r *Recorder) WriteSpectrum(w io.Writer) error {
	_, err := r.Histogram().PercentilesPrint(w, spectrumTicks, 1)
	if err != nil {
		return fmt.Errorf("latency spectrum: %w", err)
	}
	return nil
}

// TimestampCost measures one time.Now() plus time.Since() on this machine,
// the median of several runs of a tight loop (a few milliseconds): the floor
// under any latency recorded per operation, and what recording one costs.
func TimestampCost() time.Duration {
	return medianPerIteration(timestampRuns, timestampLoop, timestampRun)
}

// timestampRun times n time.Now+time.Since pairs.
func timestampRun(n int) time.Duration {
	var sum time.Duration
	start := time.Now()
	for range n {
		t := time.Now()
		sum += time.Since(t)
	}
	el := time.Since(start)
	runtime.KeepAlive(sum) // the compiler must not discard the timed loop
	return el
}

// medianPerIteration calls run(n) runs times and returns the median time
// per iteration: the median resists a run the scheduler interrupted.
func medianPerIteration(runs, n int, run func(n int) time.Duration) time.Duration {
	per := make([]time.Duration, runs)
	for i := range per {
		per[i] = run(n) / time.Duration(n)
	}
	slices.Sort(per)
	return per[len(per)/2]
}
