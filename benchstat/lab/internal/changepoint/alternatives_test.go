package changepoint

import "math"

// The two other methods docs/history.md weighs against E-divisive, as
// their users run them, for the comparison on the suite's recorded noise.

// overlapFlags is Go's performance dashboard's rule: a point is a change
// when its interval and its predecessor's do not overlap. With the
// suite's 3 values per run the interval is the run's range (a 75 %
// interval of the median: the chance that all three fall on one side of
// it is 2/8).
func overlapFlags(runs [][]float64) []int {
	var at []int
	for i := 1; i < len(runs); i++ {
		lo0, hi0 := span(runs[i-1])
		lo1, hi1 := span(runs[i])
		if lo1 > hi0 || hi1 < lo0 {
			at = append(at, i)
		}
	}
	return at
}

func span(vs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// zscoreFlags is Conbench's lookback z-score: a point is a change when it
// is more than z standard deviations of the points before it (at most 100
// of them, at least minPrior) from their mean.
func zscoreFlags(xs []float64, z float64, minPrior int) []int {
	var at []int
	for i := minPrior; i < len(xs); i++ {
		prior := xs[max(0, i-100):i]
		m, sd := meanSD(prior)
		if sd > 0 && math.Abs(xs[i]-m) > z*sd {
			at = append(at, i)
		}
	}
	return at
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}
