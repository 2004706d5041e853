package changepoint

import (
	"math"
	"strings"
)

// The suite's time figures move together from run to run: on one
// machine, one run of make bench is a few percent faster or slower in
// every engine at once (docs/history.md, "Change points"). Left in, that
// shared drift hides a change in one engine and makes changes of its
// own. Drift estimates it from the other engines' figures of the same
// run, so a change in one engine stays in its own series and the drift
// of the run leaves every series.

// Sample is one series' time per operation (ns/op) for the drift
// estimate: its engine and its run medians in run order, NaN where a run
// lacks it.
type Sample struct {
	Engine string
	Points []float64
}

// MinOthers is the fewest samples of other engines a run needs for a
// drift estimate; with fewer (a run of one engine, as a release series
// is) its factor is 1.
const MinOthers = 4

// Drift returns, per engine of samples, a factor per run: the median over
// the other engines' samples of each point's ratio to its series' median
// (a geometric middle). Divide a time (ns/op) by it, multiply a rate
// (keys/s) by it.
func Drift(samples []Sample, runs int) map[string][]float64 {
	ls := logRatios(samples, runs)
	out := map[string][]float64{}
	for _, s := range samples {
		if _, done := out[s.Engine]; !done {
			out[s.Engine] = factors(ls, runs, func(e string) bool { return e != s.Engine })
		}
	}
	return out
}

// Shared is the drift every engine's samples share, run by run: the same
// middle over all of them. The report takes each engine's drift out of
// its series, so a change that slows every engine at once (the harness,
// the machine) leaves them all; it stays here, a series of its own.
func Shared(samples []Sample, runs int) []float64 {
	return factors(logRatios(samples, runs), runs, func(string) bool { return true })
}

type logRatio struct {
	engine string
	v      []float64 // log(point / series median), NaN where missing
}

func logRatios(samples []Sample, runs int) []logRatio {
	var ls []logRatio
	for _, s := range samples {
		var present []float64
		for _, x := range s.Points {
			if x > 0 && !math.IsNaN(x) {
				present = append(present, x)
			}
		}
		if len(present) < 2 {
			continue
		}
		m := median(present)
		v := make([]float64, runs)
		for i := range v {
			v[i] = math.NaN()
			if i < len(s.Points) && s.Points[i] > 0 {
				v[i] = math.Log(s.Points[i] / m)
			}
		}
		ls = append(ls, logRatio{s.Engine, v})
	}
	return ls
}

// factors is, per run, exp of the median log ratio of the samples whose
// engine use accepts; 1 with fewer than MinOthers of them.
func factors(ls []logRatio, runs int, use func(engine string) bool) []float64 {
	f := make([]float64, runs)
	vals := make([]float64, 0, len(ls))
	for i := range f {
		vals = vals[:0]
		for _, l := range ls {
			if use(l.engine) && !math.IsNaN(l.v[i]) {
				vals = append(vals, l.v[i])
			}
		}
		f[i] = 1
		if len(vals) >= MinOthers {
			f[i] = math.Exp(median(vals))
		}
	}
	return f
}

// Correct divides a time series' points by its engine's drift factors, or
// multiplies a rate's (a unit per second); other units (bytes, counts)
// are returned as they are. xs is changed in place.
func Correct(unit string, xs, factors []float64) []float64 {
	switch {
	case isRate(unit):
		for i := range xs {
			xs[i] *= factors[i]
		}
	case isTime(unit):
		for i := range xs {
			xs[i] /= factors[i]
		}
	}
	return xs
}

// Drifts reports whether unit moves with the run's drift: a time per
// operation, a latency or a rate.
func Drifts(unit string) bool { return isTime(unit) || isRate(unit) }

func isTime(unit string) bool {
	return unit == "ns/op" || strings.HasSuffix(unit, "-ns") || strings.HasSuffix(unit, "-ns/op")
}

func isRate(unit string) bool { return strings.HasSuffix(unit, "/s") }
